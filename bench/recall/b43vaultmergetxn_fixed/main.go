// Fixed twin (PR #10877 applied).
// Project: hashicorp/vault 1.6.x (identity store) on hashicorp/go-memdb, 2021.
// Files: vault/identity_store_entities.go (pathEntityMergeID,
// handleEntityUpdateCommon), vault/identity_store_util.go (mergeEntity,
// upsertEntity), go-memdb txn.go (MemDB.Txn, Txn.Abort, Txn.Commit).
// Issue: hashicorp/vault#10876; PR: hashicorp/vault#10877 "Correct lock
// acquisition order in the `pathEntityMergeID` identity to fix deadlock
// condition" (backports #10885 for 1.6, #11251 for 1.5).
//
// A go-memdb write transaction holds the writer mutex from db.Txn(true) until
// Commit or Abort: the lock lives inside the returned *Txn. Elsewhere the
// identity store's i.lock comes first: handleEntityUpdateCommon locks i.lock
// and upsertEntity opens the write transaction. pathEntityMergeID opened the
// write transaction first and then called mergeEntity with grabLock=true,
// which locks i.lock. A concurrent update and merge deadlock, and every later
// identity write hangs behind them. The fix takes i.lock in pathEntityMergeID
// before opening the transaction and passes grabLock=false.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type MemDB struct {
	writer sync.Mutex
	tables map[string]map[string]interface{} // an immutable radix tree, swapped on commit
}

type Txn struct {
	db          *MemDB
	write, done bool
	changes     map[[2]string]interface{} // {table, id} -> object, nil for a delete
}

// Txn starts a new transaction; there can only be a single concurrent writer.
func (db *MemDB) Txn(write bool) *Txn {
	if write {
		db.writer.Lock()
	}
	return &Txn{db: db, write: write, changes: map[[2]string]interface{}{}}
}

func (txn *Txn) First(table, id string) (interface{}, error) { return txn.db.tables[table][id], nil }

func (txn *Txn) Insert(table, id string, obj interface{}) error {
	txn.changes[[2]string{table, id}] = obj
	return nil
}

func (txn *Txn) Delete(table, id string) error { return txn.Insert(table, id, nil) }

func (txn *Txn) Abort() {
	if !txn.write || txn.done {
		return
	}
	txn.done = true
	txn.db.writer.Unlock()
}

func (txn *Txn) Commit() {
	if !txn.write || txn.done {
		return
	}
	for k, obj := range txn.changes {
		if obj == nil {
			delete(txn.db.tables[k[0]], k[1])
		} else {
			txn.db.tables[k[0]][k[1]] = obj
		}
	}
	txn.done = true
	txn.db.writer.Unlock()
}

type Entity struct {
	ID                string
	Aliases, Policies []string
}

// OperationFunc is a framework path callback; d stands for *framework.FieldData.
type OperationFunc func(ctx context.Context, d map[string]interface{}) error

type IdentityStore struct {
	lock sync.RWMutex
	db   *MemDB
}

func (i *IdentityStore) MemDBEntityByID(entityID string, clone bool) (*Entity, error) {
	raw, err := i.db.Txn(false).First("entities", entityID)
	if err != nil || raw == nil {
		return nil, err
	}
	e := *raw.(*Entity)
	return &e, nil // clone
}

func (i *IdentityStore) MemDBUpsertEntityInTxn(txn *Txn, entity *Entity) error {
	return txn.Insert("entities", entity.ID, entity)
}

func (i *IdentityStore) upsertEntity(ctx context.Context, entity *Entity, previousEntity *Entity, persist bool) error {
	txn := i.db.Txn(true)
	defer txn.Abort()
	if err := i.MemDBUpsertEntityInTxn(txn, entity); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (i *IdentityStore) mergeEntity(ctx context.Context, txn *Txn, toEntity *Entity, fromEntityIDs []string, force, grabLock, mergePolicies, persist bool) (error, error) {
	if grabLock {
		i.lock.Lock()
		defer i.lock.Unlock()
	}
	if toEntity == nil {
		return errors.New("entity id to merge to is invalid"), nil
	}
	for _, fromEntityID := range fromEntityIDs {
		fromEntity, err := i.MemDBEntityByID(fromEntityID, false)
		if err != nil || fromEntity == nil {
			return errors.New("entity id to merge from is invalid"), err
		}
		toEntity.Aliases = append(toEntity.Aliases, fromEntity.Aliases...)
		if err := txn.Delete("entities", fromEntity.ID); err != nil {
			return nil, err
		}
	}
	return nil, i.MemDBUpsertEntityInTxn(txn, toEntity)
}

// pathEntityMergeID merges two or more entities into a single entity
func (i *IdentityStore) pathEntityMergeID() OperationFunc {
	return func(ctx context.Context, d map[string]interface{}) error {
		toEntityID := d["to_entity_id"].(string)
		fromEntityIDs := d["from_entity_ids"].([]string)
		force := d["force"].(bool)
		i.lock.Lock() // before the memdb writer lock, as everywhere else
		defer i.lock.Unlock()
		// Create a MemDB transaction to merge entities
		txn := i.db.Txn(true)
		defer txn.Abort()
		toEntity, err := i.MemDBEntityByID(toEntityID, true)
		if err != nil {
			return err
		}
		time.Sleep(30 * time.Millisecond) // scheduling delay: lets the concurrent entity update run
		userErr, intErr := i.mergeEntity(ctx, txn, toEntity, fromEntityIDs, force, false, false, true)
		if userErr != nil || intErr != nil {
			return errors.Join(userErr, intErr)
		}
		// Committing the transaction *after* successfully performing storage persistence
		txn.Commit()
		return nil
	}
}

// handleEntityUpdateCommon is used to update an entity
func (i *IdentityStore) handleEntityUpdateCommon() OperationFunc {
	return func(ctx context.Context, d map[string]interface{}) error {
		i.lock.Lock()
		defer i.lock.Unlock()
		entity, err := i.MemDBEntityByID(d["id"].(string), true)
		if err != nil || entity == nil {
			return errors.New("entity not found from id")
		}
		entity.Policies = d["policies"].([]string)
		// Update MemDB and persist entity object
		return i.upsertEntity(ctx, entity, nil, true)
	}
}

func main() {
	i := &IdentityStore{db: &MemDB{tables: map[string]map[string]interface{}{"entities": {
		"e-alice":      &Entity{ID: "e-alice", Aliases: []string{"alice@github"}},
		"e-alice-ldap": &Entity{ID: "e-alice-ldap", Aliases: []string{"alice@ldap"}},
		"e-bob":        &Entity{ID: "e-bob", Aliases: []string{"bob@github"}},
	}}}}
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // POST identity/entity/merge
		defer wg.Done()
		fmt.Println("merge:", i.pathEntityMergeID()(ctx, map[string]interface{}{
			"to_entity_id": "e-alice", "from_entity_ids": []string{"e-alice-ldap"}, "force": false}))
	}()
	go func() { // POST identity/entity/id/e-bob
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		fmt.Println("update:", i.handleEntityUpdateCommon()(ctx, map[string]interface{}{
			"id": "e-bob", "policies": []string{"dev"}}))
	}()
	wg.Wait()

	fmt.Println("alice aliases:", i.db.tables["entities"]["e-alice"].(*Entity).Aliases)
}
