// Project: scylladb/gemini (automatic randomized testing tool for Scylla)
// Version: v1.7.x, September 2020
// Files/functions: schema.go: Table (mu sync.RWMutex), Schema.GenMutateStmt,
// Schema.GenInsertStmt, Schema.GenInsertJSONStmt, Schema.GenUpdateStmt,
// Schema.GenDeleteRows, Schema.GenDDLStmt, genAddColumnStmt;
// cmd/gemini/jobs.go: mutation, ddl; store/store.go: delegatingStore.Mutate.
// Issue: scylladb/gemini #246 "Possible deadlock due to recursive locking",
// fixed by PR #254 "Remove some recursive table read locks".
//
// Each table has an RWMutex that the ddl job write-locks while it alters the
// table (the post-statement hook appends or removes a column). Mutation jobs
// build statements with Schema.GenMutateStmt, which read-locks the table and
// dispatches to GenInsertStmt, GenInsertJSONStmt, GenUpdateStmt or
// GenDeleteRows, and each of those also took t.mu.RLock. When the ddl job
// calls t.mu.Lock between the two read locks, the writer waits for the outer
// read lock and the inner read lock waits behind the pending writer.
// The fix removes the read locks from the nested generators; only
// GenMutateStmt (the entry point) locks the table.
package main

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"time"
)

type ColumnDef struct{ Name, Type string }

type Columns []*ColumnDef

func (cs Columns) Names() []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

type Table struct {
	Name           string
	PartitionKeys  Columns
	ClusteringKeys Columns
	Columns        Columns
	KnownIssues    map[string]bool
	// mu protects the table during schema changes
	mu sync.RWMutex
}

type Schema struct {
	Keyspace string
	Tables   []*Table
}

type Stmt struct {
	Query  string
	Values []interface{}
}

type Stmts struct {
	List         []*Stmt
	PostStmtHook func()
}

func (s *Schema) GenInsertStmt(t *Table, r *rand.Rand) (*Stmt, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	cols := append(append(t.PartitionKeys.Names(), t.ClusteringKeys.Names()...), t.Columns.Names()...)
	q := fmt.Sprintf("INSERT INTO %s.%s (%s) VALUES (%s)", s.Keyspace, t.Name,
		strings.Join(cols, ","), strings.TrimSuffix(strings.Repeat("?,", len(cols)), ","))
	return &Stmt{Query: q, Values: []interface{}{r.Int63()}}, nil
}

func (s *Schema) GenInsertJSONStmt(t *Table, r *rand.Rand) (*Stmt, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return &Stmt{Query: fmt.Sprintf("INSERT INTO %s.%s JSON ?", s.Keyspace, t.Name), Values: []interface{}{"{}"}}, nil
}

func (s *Schema) GenUpdateStmt(t *Table, r *rand.Rand) (*Stmt, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return &Stmt{Query: fmt.Sprintf("UPDATE %s.%s SET %s=? WHERE %s=?", s.Keyspace, t.Name,
		t.Columns[0].Name, t.PartitionKeys[0].Name)}, nil
}

func (s *Schema) GenDeleteRows(t *Table, r *rand.Rand) (*Stmt, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return &Stmt{Query: fmt.Sprintf("DELETE FROM %s.%s WHERE %s=?", s.Keyspace, t.Name, t.PartitionKeys[0].Name)}, nil
}

func (s *Schema) GenMutateStmt(t *Table, r *rand.Rand, deletes bool) (*Stmt, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	// The ddl job picks this table now.
	time.Sleep(50 * time.Millisecond)
	if !deletes {
		return s.GenInsertStmt(t, r)
	}
	switch n := r.Intn(1000); n {
	case 10, 100:
		return s.GenDeleteRows(t, r)
	default:
		switch r.Intn(3) {
		case 0:
			return s.GenInsertStmt(t, r)
		case 1:
			if t.KnownIssues["json_with_tuples"] {
				return s.GenInsertStmt(t, r)
			}
			return s.GenInsertJSONStmt(t, r)
		default:
			return s.GenUpdateStmt(t, r)
		}
	}
}

func (s *Schema) genAddColumnStmt(t *Table, column *ColumnDef) (*Stmts, error) {
	q := "ALTER TABLE " + s.Keyspace + "." + t.Name + " ADD " + column.Name + " " + column.Type
	return &Stmts{
		List: []*Stmt{{Query: q}},
		PostStmtHook: func() {
			t.Columns = append(t.Columns, column)
		},
	}, nil
}

func (s *Schema) GenDDLStmt(t *Table, r *rand.Rand) (*Stmts, error) {
	name := fmt.Sprintf("col%d", len(t.Columns))
	return s.genAddColumnStmt(t, &ColumnDef{Name: name, Type: "int"})
}

type Store interface {
	Mutate(ctx context.Context, query string, values ...interface{}) error
}

type cqlStore struct{ name string }

func (c *cqlStore) Mutate(ctx context.Context, query string, values ...interface{}) error { return nil }

type delegatingStore struct{ testStore, oracleStore Store }

func (ds delegatingStore) Mutate(ctx context.Context, query string, values ...interface{}) error {
	if err := ds.oracleStore.Mutate(ctx, query, values...); err != nil {
		return err
	}
	return ds.testStore.Mutate(ctx, query, values...)
}

func mutation(ctx context.Context, schema *Schema, table *Table, s Store, r *rand.Rand, deletes bool) error {
	mutateStmt, err := schema.GenMutateStmt(table, r, deletes)
	if err != nil {
		return err
	}
	return s.Mutate(ctx, mutateStmt.Query, mutateStmt.Values...)
}

func ddl(ctx context.Context, schema *Schema, table *Table, s Store, r *rand.Rand) error {
	table.mu.Lock()
	defer table.mu.Unlock()
	ddlStmts, err := schema.GenDDLStmt(table, r)
	if err != nil {
		return err
	}
	defer ddlStmts.PostStmtHook()
	for _, stmt := range ddlStmts.List {
		if err := s.Mutate(ctx, stmt.Query); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	ctx := context.Background()
	table := &Table{
		Name:          "table1",
		PartitionKeys: Columns{{Name: "pk0", Type: "int"}},
		Columns:       Columns{{Name: "col0", Type: "text"}},
		KnownIssues:   map[string]bool{},
	}
	schema := &Schema{Keyspace: "ks1", Tables: []*Table{table}}
	store := delegatingStore{testStore: &cqlStore{"test"}, oracleStore: &cqlStore{"oracle"}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // mutation job
		defer wg.Done()
		fmt.Println("mutation:", mutation(ctx, schema, table, store, rand.New(rand.NewSource(1)), true))
	}()
	go func() { // ddl job
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		fmt.Println("ddl:", ddl(ctx, schema, table, store, rand.New(rand.NewSource(2))))
	}()
	wg.Wait()
}
