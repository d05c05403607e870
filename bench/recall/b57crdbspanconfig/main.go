// Project: cockroachdb/cockroach, v22.1 development cycle (December 2021).
// Files/functions: pkg/spanconfig/spanconfigstore/store.go (Store.ForEachOverlapping,
// Store.GetSpanConfigForKey, Store.Apply, Store.accumulateOpsForLocked), and the
// randomized test in pkg/spanconfig/spanconfigstore/store_test.go that verifies the
// store's contents through the spanconfig.StoreReader interface.
// References: issue #73423, fixed by PR #73426 "spanconfig/store: fix a test-only
// recursive lock" (merged 2021-12-03).
//
// spanconfigstore.Store keeps its interval tree under s.mu, a syncutil.RWMutex (an
// embedded sync.RWMutex, swapped for go-deadlock in deadlock builds). ForEachOverlapping
// takes s.mu.RLock() and invokes the caller's closure for every overlapping entry while
// still holding it. The randomized test's verification closure called
// GetSpanConfigForKey (through the StoreReader interface) for each entry, and
// GetSpanConfigForKey takes s.mu.RLock() again. A recursive read lock is only safe while
// no writer is queued: once an Apply (s.mu.Lock(), as issued by the KVSubscriber when a
// span config update arrives on the rangefeed) is waiting between the two RLock calls, Go's
// RWMutex blocks the inner RLock behind the writer, and the writer waits for the outer read
// lock to be released, so both goroutines hang. The test itself was single-threaded, so
// it only surfaced as a recursive-lock report (issue #73423), but any concurrent writer
// turns the pattern into a hang, as this program shows.
//
// The fix stops calling GetSpanConfigForKey from inside the ForEachOverlapping closure:
// the entries are collected first and looked up after the iteration has released the
// read lock.
package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// ---- util/syncutil ----

type RWMutex struct{ sync.RWMutex }

func (m *RWMutex) AssertRHeld() {}

// ---- roachpb ----

type Span struct{ Key, EndKey string }

func (s Span) Valid() bool               { return s.Key < s.EndKey }
func (s Span) Overlaps(o Span) bool      { return s.Key < o.EndKey && o.Key < s.EndKey }
func (s Span) ContainsKey(k string) bool { return s.Key <= k && k < s.EndKey }

type SpanConfig struct{ NumReplicas int32 }

type SpanConfigEntry struct {
	Span   Span
	Config SpanConfig
}

var EverythingSpan = Span{Key: "", EndKey: "\xff\xff"}

// ---- spanconfig ----

type StoreReader interface {
	NeedsSplit(ctx context.Context, start, end string) bool
	GetSpanConfigForKey(ctx context.Context, key string) (SpanConfig, error)
}

type Update SpanConfigEntry

// ---- spanconfigstore/store.go ----

type storeEntry struct {
	SpanConfigEntry
	id int64
}

type Store struct {
	mu struct {
		RWMutex
		tree    []*storeEntry // sorted, non-overlapping: stands in for interval.Tree
		idAlloc int64
	}
	fallback SpanConfig
}

var _ StoreReader = &Store{}

func New(fallback SpanConfig) *Store { return &Store{fallback: fallback} }

func (s *Store) getOverlappingLocked(sp Span) []*storeEntry {
	s.mu.AssertRHeld()
	var res []*storeEntry
	for _, e := range s.mu.tree {
		if e.Span.Overlaps(sp) {
			res = append(res, e)
		}
	}
	return res
}

// ForEachOverlapping iterates through the set of entries that overlap with the
// given span, in sorted order.
func (s *Store) ForEachOverlapping(
	ctx context.Context, sp Span, f func(SpanConfigEntry) error,
) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.getOverlappingLocked(sp) {
		if err := f(e.SpanConfigEntry); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) NeedsSplit(ctx context.Context, start, end string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.getOverlappingLocked(Span{Key: start, EndKey: end})) > 1
}

// GetSpanConfigForKey is part of the spanconfig.StoreReader interface.
func (s *Store) GetSpanConfigForKey(ctx context.Context, key string) (SpanConfig, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.mu.tree {
		if e.Span.ContainsKey(key) {
			return e.Config, nil
		}
	}
	return s.fallback, nil
}

// Apply is part of the spanconfig.StoreWriter interface.
func (s *Store) Apply(ctx context.Context, dryrun bool, updates ...Update) (deleted []Span, added []SpanConfigEntry, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range updates {
		if !u.Span.Valid() {
			return nil, nil, errors.New("invalid span")
		}
	}
	toDelete, toAdd := s.accumulateOpsForLocked(updates)
	for _, d := range toDelete {
		deleted = append(deleted, d.Span)
	}
	for _, a := range toAdd {
		added = append(added, a.SpanConfigEntry)
	}
	if dryrun {
		return deleted, added, nil
	}
	kept := s.mu.tree[:0:0]
	for _, e := range s.mu.tree {
		if !containsEntry(toDelete, e) {
			kept = append(kept, e)
		}
	}
	s.mu.tree = append(kept, toAdd...)
	sort.Slice(s.mu.tree, func(i, j int) bool { return s.mu.tree[i].Span.Key < s.mu.tree[j].Span.Key })
	return deleted, added, nil
}

func containsEntry(list []*storeEntry, e *storeEntry) bool {
	for _, l := range list {
		if l.id == e.id {
			return true
		}
	}
	return false
}

// accumulateOpsForLocked deletes overlapping entries in their entirety and
// re-adds the non-overlapping segments (single-update version).
func (s *Store) accumulateOpsForLocked(updates []Update) (toDelete, toAdd []*storeEntry) {
	for _, u := range updates {
		for _, ex := range s.getOverlappingLocked(u.Span) {
			toDelete = append(toDelete, ex)
			if pre := (Span{Key: ex.Span.Key, EndKey: u.Span.Key}); pre.Valid() {
				toAdd = append(toAdd, s.makeEntryLocked(pre, ex.Config))
			}
			if post := (Span{Key: u.Span.EndKey, EndKey: ex.Span.EndKey}); post.Valid() {
				toAdd = append(toAdd, s.makeEntryLocked(post, ex.Config))
			}
		}
		toAdd = append(toAdd, s.makeEntryLocked(u.Span, u.Config))
	}
	return toDelete, toAdd
}

func (s *Store) makeEntryLocked(sp Span, conf SpanConfig) *storeEntry {
	s.mu.idAlloc++
	return &storeEntry{SpanConfigEntry: SpanConfigEntry{Span: sp, Config: conf}, id: s.mu.idAlloc}
}

// ---- store_test.go: randomized verification ----

func verifyStore(ctx context.Context, store *Store, reader StoreReader) error {
	var first = true
	return store.ForEachOverlapping(ctx, EverythingSpan, func(entry SpanConfigEntry) error {
		if first {
			first = false
			time.Sleep(50 * time.Millisecond) // a KVSubscriber update arrives meanwhile
		}
		conf, err := reader.GetSpanConfigForKey(ctx, entry.Span.Key)
		if err != nil {
			return err
		}
		if conf != entry.Config {
			return fmt.Errorf("expected %v for %s, got %v", entry.Config, entry.Span.Key, conf)
		}
		return nil
	})
}

func main() {
	ctx := context.Background()
	store := New(SpanConfig{NumReplicas: 3})
	_, _, _ = store.Apply(ctx, false,
		Update{Span: Span{"a", "c"}, Config: SpanConfig{NumReplicas: 5}},
		Update{Span: Span{"e", "g"}, Config: SpanConfig{NumReplicas: 1}})

	done := make(chan struct{})
	go func() { // rangefeed-driven KVSubscriber applying an update
		defer close(done)
		time.Sleep(10 * time.Millisecond)
		_, _, _ = store.Apply(ctx, false, Update{Span: Span{"b", "f"}, Config: SpanConfig{NumReplicas: 7}})
	}()

	if err := verifyStore(ctx, store, store); err != nil {
		fmt.Println("verify:", err)
	}
	<-done
	fmt.Println("split needed in [a,z):", store.NeedsSplit(ctx, "a", "z"))
}
