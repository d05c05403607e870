// Project: dgraph-io/dgraph v1.0.x (posting/list.go, x/lock.go, worker/task.go,
// worker/draft.go), mid-2018.
// PR #2548 "Fix various deadlocks in Dgraph", item 1: "Deadlock caused by
// recursive locking in posting/list.go in an internal function, which was
// causing applyCh to block when applying a mutation on a posting list with a
// read from a query."
//
// List.Facets read-locks the posting list (line 170) and calls the
// internal helper postingFor, which read-locks the same list again (line
// 151) before delegating to postingForLangs. When the raft apply loop
// (draining applyCh) calls List.AddMutation on that posting list between the
// two read locks, its Lock waits for the query's first read lock and the
// pending writer blocks the query's second read lock: the query, the apply
// loop and with it every later mutation and read of the predicate hang. The
// fix makes postingFor assert the read lock instead of taking it, and moves
// the RLock into the public ValueFor ("all public methods should acquire
// locks, while private ones should assert them").
// FIXED TWIN of b38dgraphfacetsrlock: postingFor asserts the read lock instead of taking it; ValueFor takes it.
package main

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
)

// ---- x package ------------------------------------------------------------

// SafeMutex can be used in place of sync.RWMutex
type SafeMutex struct {
	m sync.RWMutex
}

func (s *SafeMutex) Lock()        { s.m.Lock() }
func (s *SafeMutex) Unlock()      { s.m.Unlock() }
func (s *SafeMutex) RLock()       { s.m.RLock() }
func (s *SafeMutex) RUnlock()     { s.m.RUnlock() }
func (s *SafeMutex) AssertLock()  {}
func (s *SafeMutex) AssertRLock() {}

// ---- posting package ------------------------------------------------------

var ErrNoValue = errors.New("No value found")

type Facet struct {
	Key   string
	Value string
}

type Posting struct {
	Uid      uint64
	Value    []byte
	LangTag  []byte
	Facets   []*Facet
	StartTs  uint64
	CommitTs uint64
}

type PostingList struct {
	Postings []*Posting
	Commit   uint64
}

type List struct {
	SafeMutex
	key         []byte
	plist       *PostingList
	mutationMap map[uint64]*PostingList
	commitTs    uint64
}

// AddMutation adds mutation to mutation layers.
func (l *List) AddMutation(startTs uint64, p *Posting) error {
	l.Lock()
	defer l.Unlock()
	return l.addMutation(startTs, p)
}

func (l *List) addMutation(startTs uint64, p *Posting) error {
	l.AssertLock()
	p.StartTs = startTs
	pl, ok := l.mutationMap[startTs]
	if !ok {
		pl = &PostingList{}
		l.mutationMap[startTs] = pl
	}
	pl.Postings = append(pl.Postings[:0], p)
	return nil
}

func (l *List) CommitMutation(startTs, commitTs uint64) error {
	l.Lock()
	defer l.Unlock()
	if pl, ok := l.mutationMap[startTs]; ok {
		pl.Commit = commitTs
		l.commitTs = commitTs
	}
	// Older committed layers are superseded by this one.
	for ts, pl := range l.mutationMap {
		if pl.Commit > 0 && pl.Commit < commitTs {
			delete(l.mutationMap, ts)
		}
	}
	return nil
}

func (l *List) iterate(readTs uint64, afterUid uint64, f func(obj *Posting) bool) error {
	l.AssertRLock()
	var posts []*Posting
	for _, pl := range l.mutationMap {
		if pl.Commit > 0 && pl.Commit <= readTs {
			posts = append(posts, pl.Postings...)
		}
	}
	posts = append(posts, l.plist.Postings...)
	sort.Slice(posts, func(i, j int) bool { return posts[i].Uid < posts[j].Uid })
	for _, p := range posts {
		if p.Uid > afterUid && !f(p) {
			break
		}
	}
	return nil
}

func (l *List) findPosting(readTs uint64, uid uint64) (found bool, pos *Posting, err error) {
	// Iterate starts iterating after the given argument, so we pass uid - 1
	err = l.iterate(readTs, uid-1, func(p *Posting) bool {
		if p.Uid == uid {
			pos = p
			found = true
		}
		return false
	})
	return found, pos, err
}

// ValueFor returns Value from posting list, according to preferred language list (langs).
func (l *List) ValueFor(readTs uint64, langs []string) ([]byte, error) {
	l.RLock() // All public methods should acquire locks, while private ones should assert them.
	defer l.RUnlock()
	p, err := l.postingFor(readTs, langs)
	if err != nil {
		return nil, err
	}
	return p.Value, nil
}

func (l *List) postingFor(readTs uint64, langs []string) (p *Posting, rerr error) {
	l.AssertRLock() // Avoid recursive locking by asserting a lock here.
	return l.postingForLangs(readTs, langs)
}

func (l *List) postingForLangs(readTs uint64, langs []string) (pos *Posting, rerr error) {
	l.AssertRLock()
	// look for value without language
	if len(langs) == 0 {
		if found, pos, err := l.findPosting(readTs, math.MaxUint64); err != nil {
			return nil, err
		} else if found {
			return pos, nil
		}
	}
	return pos, ErrNoValue
}

// Facets gives facets for the posting representing value.
func (l *List) Facets(readTs uint64, langs []string) ([]*Facet, error) {
	l.RLock()
	defer l.RUnlock()
	p, err := l.postingFor(readTs, langs)
	if err != nil {
		return nil, err
	}
	return append([]*Facet(nil), p.Facets...), nil
}

// ---- worker package -------------------------------------------------------

// retrieveValuesAndFacets serves a query of the form `name @facets`.
func retrieveValuesAndFacets(pl *List, readTs uint64) (string, int, error) {
	val, err := pl.ValueFor(readTs, nil)
	if err != nil {
		return "", 0, err
	}
	fcs, err := pl.Facets(readTs, nil)
	return string(val), len(fcs), err
}

func main() {
	pl := &List{
		key:         []byte("name|0x1"),
		plist:       &PostingList{Postings: []*Posting{{Uid: math.MaxUint64, Value: []byte("alice"), Facets: []*Facet{{"since", "2006"}}}}},
		mutationMap: map[uint64]*PostingList{},
	}
	var wg sync.WaitGroup
	// Queries.
	for q := 0; q < 2; q++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100000; i++ {
				_, _, _ = retrieveValuesAndFacets(pl, uint64(i))
			}
		}()
	}
	// The apply loop draining applyCh: mutations and commits on the same key.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ts := uint64(1); ts <= 100000; ts++ {
			_ = pl.AddMutation(ts, &Posting{Uid: math.MaxUint64, Value: []byte("bob"), Facets: []*Facet{{"since", "2018"}}})
			_ = pl.CommitMutation(ts, ts)
		}
	}()
	wg.Wait()
	fmt.Println("ok")
}
