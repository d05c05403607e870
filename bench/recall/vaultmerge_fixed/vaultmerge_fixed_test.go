// FIXED TWIN of ../vaultmerge: same program with the fix applied (see "FIX:" comments).
//
// Project: vault (vault/identity_store_util.go mergeEntity, sdk/helper/locksutil).
//
// Bug (approximate): identity entities are protected by striped locks obtained
// with locksutil.LockForKey and kept in local variables. mergeEntity locked the
// "to" entity's lock and then, in the loop over from_entity_ids, each "from"
// entity's lock. Two merges running in opposite directions (A <- B and B <- A;
// e.g. an explicit entity merge racing with the merge triggered by an alias
// being re-assigned on a performance standby) each hold their "to" lock and wait
// for the other's -> all identity writes for those stripes hang.
// Fix: take all the needed locks up front with locksutil.LocksForKeys, which
// de-duplicates and returns them in a fixed (index) order.
package vaultmerge_fixed

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"
)

// ===================== sdk/helper/locksutil =====================

const LockCount = 256

type LockEntry struct {
	sync.RWMutex
}

func CreateLocks() []*LockEntry {
	ret := make([]*LockEntry, LockCount)
	for i := range ret {
		ret[i] = new(LockEntry)
	}
	return ret
}

func LockIndexForKey(key string) uint8 {
	h := sha256.Sum256([]byte(key)) // blake2b in vault
	return h[0]
}

func LockForKey(locks []*LockEntry, key string) *LockEntry {
	return locks[LockIndexForKey(key)]
}

// LocksForKeys returns the locks for the given keys, de-duplicated and sorted
// by lock index so that callers always acquire them in the same order.
func LocksForKeys(locks []*LockEntry, keys []string) []*LockEntry {
	seen := map[uint8]struct{}{}
	var idx []int
	for _, k := range keys {
		i := LockIndexForKey(k)
		if _, ok := seen[i]; !ok {
			seen[i] = struct{}{}
			idx = append(idx, int(i))
		}
	}
	sort.Ints(idx)
	ret := make([]*LockEntry, 0, len(idx))
	for _, i := range idx {
		ret = append(ret, locks[i])
	}
	return ret
}

// ===================== vault identity store =====================

type Alias struct {
	ID, MountAccessor, Name string
}

type Entity struct {
	ID       string
	Name     string
	Aliases  []*Alias
	Policies []string
}

type memDB struct {
	mu       sync.Mutex
	entities map[string]*Entity
}

type IdentityStore struct {
	db          *memDB
	entityLocks []*LockEntry
}

func NewIdentityStore() *IdentityStore {
	return &IdentityStore{db: &memDB{entities: map[string]*Entity{}}, entityLocks: CreateLocks()}
}

func (i *IdentityStore) MemDBEntityByID(entityID string, clone bool) (*Entity, error) {
	time.Sleep(20 * time.Millisecond) // memdb read txn + storage packer bucket load
	i.db.mu.Lock()
	defer i.db.mu.Unlock()
	e, ok := i.db.entities[entityID]
	if !ok {
		return nil, nil
	}
	if clone {
		c := *e
		c.Aliases = append([]*Alias(nil), e.Aliases...)
		return &c, nil
	}
	return e, nil
}

func (i *IdentityStore) upsertEntity(e *Entity) {
	i.db.mu.Lock()
	defer i.db.mu.Unlock()
	i.db.entities[e.ID] = e
}

func (i *IdentityStore) deleteEntity(id string) {
	i.db.mu.Lock()
	defer i.db.mu.Unlock()
	delete(i.db.entities, id)
}

func (i *IdentityStore) mergeEntity(ctx context.Context, toEntityID string, fromEntityIDs []string, force bool) error {
	// FIX: take every entity lock up front, de-duplicated and in index order.
	locks := LocksForKeys(i.entityLocks, append([]string{toEntityID}, fromEntityIDs...))
	for _, l := range locks {
		l.Lock()
		defer l.Unlock()
	}

	toEntity, err := i.MemDBEntityByID(toEntityID, true)
	if err != nil {
		return err
	}
	if toEntity == nil {
		return errors.New("entity id to merge to is invalid")
	}

	for _, fromEntityID := range fromEntityIDs {
		if fromEntityID == toEntityID {
			return errors.New("to_entity_id should not be present in from_entity_ids")
		}
		fromEntity, err := i.MemDBEntityByID(fromEntityID, false)
		if err != nil {
			return err
		}
		if fromEntity == nil {
			return errors.New("entity id to merge from is invalid")
		}
		toEntity.Aliases = append(toEntity.Aliases, fromEntity.Aliases...)
		toEntity.Policies = append(toEntity.Policies, fromEntity.Policies...)
		i.deleteEntity(fromEntityID)
	}
	i.upsertEntity(toEntity)
	return nil
}

func TestConcurrentOppositeMerges(t *testing.T) {
	i := NewIdentityStore()
	a := &Entity{ID: "7b0a2b52-entity-a", Name: "alice", Aliases: []*Alias{{ID: "al-1", MountAccessor: "auth_userpass_1", Name: "alice"}}}
	b := &Entity{ID: "c9d4e1f0-entity-b", Name: "alice-gh", Aliases: []*Alias{{ID: "al-2", MountAccessor: "auth_github_2", Name: "alice"}}}
	if LockIndexForKey(a.ID) == LockIndexForKey(b.ID) {
		t.Fatal("test entities share a lock stripe; pick other IDs")
	}
	i.upsertEntity(a)
	i.upsertEntity(b)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { // POST identity/entity/merge  to=a from=[b]
		defer wg.Done()
		errs[0] = i.mergeEntity(context.Background(), a.ID, []string{b.ID}, false)
	}()
	go func() { // alias re-assignment forwarded from a perf standby: to=b from=[a]
		defer wg.Done()
		errs[1] = i.mergeEntity(context.Background(), b.ID, []string{a.ID}, false)
	}()
	wg.Wait()

	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		}
	}
	if ok != 1 {
		t.Fatalf("want exactly one successful merge, got errors %v", fmt.Sprint(errs))
	}
}
