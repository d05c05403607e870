package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

type OnlineDDL struct {
	UUID     string
	Table    string
	SQL      string
	Strategy string
}

type migrationRow struct {
	uuid   string
	status string
}

type Result struct{ RowsAffected uint64 }

type Executor struct {
	migrationMutex sync.Mutex
	migrations     map[string]*migrationRow
}

func (e *Executor) RetryMigration(ctx context.Context, uuid string) (*Result, error) {
	e.migrationMutex.Lock()
	defer e.migrationMutex.Unlock()

	row, ok := e.migrations[uuid]
	if !ok {
		return nil, errors.New("no such migration")
	}
	if row.status != "failed" && row.status != "cancelled" {
		return &Result{}, nil
	}
	row.status = "queued"
	return &Result{RowsAffected: 1}, nil
}

func (e *Executor) submitCallbackIfNonConflicting(ctx context.Context, onlineDDL *OnlineDDL,
	submitQuery string, callback func() (*Result, error)) (*Result, error) {

	// We wrap everything in a function because we want the mutex released
	// before the callback runs.
	resubmit, err := func() (bool, error) {
		e.migrationMutex.Lock()
		defer e.migrationMutex.Unlock()

		for _, row := range e.migrations {
			if row.uuid != onlineDDL.UUID && (row.status == "running" || row.status == "queued") {
				return false, fmt.Errorf("conflicting migration %s is pending", row.uuid)
			}
		}
		if _, exists := e.migrations[onlineDDL.UUID]; exists {
			return true, nil
		}
		e.migrations[onlineDDL.UUID] = &migrationRow{uuid: onlineDDL.UUID, status: "queued"}
		return false, nil
	}()
	if err != nil {
		return nil, err
	}
	if resubmit {
		return callback()
	}
	return &Result{RowsAffected: 1}, nil
}

func (e *Executor) SubmitMigration(ctx context.Context, onlineDDL *OnlineDDL) (*Result, error) {
	submitQuery := fmt.Sprintf("insert into _vt.schema_migrations (migration_uuid, mysql_table) values (%q, %q)",
		onlineDDL.UUID, onlineDDL.Table)
	return e.submitCallbackIfNonConflicting(ctx, onlineDDL, submitQuery, func() (*Result, error) {
		return e.RetryMigration(ctx, onlineDDL.UUID)
	})
}

func main() {
	e := &Executor{migrations: map[string]*migrationRow{}}
	ctx := context.Background()
	ddl := &OnlineDDL{UUID: "a1b2c3d4_e5f6", Table: "customer", SQL: "alter table customer add column c int", Strategy: "vitess"}

	res, err := e.SubmitMigration(ctx, ddl)
	fmt.Println("first submit:", res, err)
	e.migrations[ddl.UUID].status = "failed"

	res, err = e.SubmitMigration(ctx, ddl)
	fmt.Println("resubmit:", res, err)
}
