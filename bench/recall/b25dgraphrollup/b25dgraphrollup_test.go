// Project: dgraph-io/dgraph (posting.List)
// Bug: List.Iterate held the embedded x.SafeMutex read lock and, when the delta layer grew past maxDeltas, called l.optimize() to fold the mutations into the immutable posting list; optimize takes l.Lock() on the same RWMutex, so the read lock is never released.
// Fix: Iterate checks the delta count, folds the deltas under the write lock first, and only then takes the read lock to iterate.
package b25dgraphrollup

import (
	"errors"
	"math"
	"sort"
	"sync"
	"testing"
)

var ErrStopIteration = errors.New("stop iteration")

type SafeMutex struct {
	m sync.RWMutex
}

func (s *SafeMutex) Lock()        { s.m.Lock() }
func (s *SafeMutex) Unlock()      { s.m.Unlock() }
func (s *SafeMutex) RLock()       { s.m.RLock() }
func (s *SafeMutex) RUnlock()     { s.m.RUnlock() }
func (s *SafeMutex) AssertLock()  {}
func (s *SafeMutex) AssertRLock() {}

const maxDeltas = 4

type Posting struct {
	Uid      uint64
	StartTs  uint64
	CommitTs uint64
	Op       int
}

type PostingList struct {
	Postings []*Posting
	CommitTs uint64
}

type List struct {
	SafeMutex
	key         []byte
	plist       *PostingList
	mutationMap map[uint64]*PostingList
	minTs       uint64
	maxTs       uint64
}

func newList(key []byte) *List {
	return &List{key: key, plist: &PostingList{}, mutationMap: map[uint64]*PostingList{}}
}

func (l *List) addMutation(startTs, commitTs uint64, p *Posting) {
	l.Lock()
	defer l.Unlock()
	pl, ok := l.mutationMap[startTs]
	if !ok {
		pl = &PostingList{CommitTs: commitTs}
		l.mutationMap[startTs] = pl
	}
	p.StartTs, p.CommitTs = startTs, commitTs
	pl.Postings = append(pl.Postings, p)
	if commitTs > l.maxTs {
		l.maxTs = commitTs
	}
}

func (l *List) optimize() {
	l.Lock()
	defer l.Unlock()
	l.rollup(math.MaxUint64)
}

func (l *List) rollup(readTs uint64) {
	l.AssertLock()
	seen := map[uint64]bool{}
	for _, p := range l.plist.Postings {
		seen[p.Uid] = true
	}
	for ts, pl := range l.mutationMap {
		if pl.CommitTs == 0 || pl.CommitTs > readTs {
			continue
		}
		for _, p := range pl.Postings {
			if !seen[p.Uid] {
				l.plist.Postings = append(l.plist.Postings, p)
				seen[p.Uid] = true
			}
		}
		delete(l.mutationMap, ts)
	}
	sort.Slice(l.plist.Postings, func(i, j int) bool { return l.plist.Postings[i].Uid < l.plist.Postings[j].Uid })
	l.minTs = l.maxTs
}

func (l *List) Iterate(readTs uint64, afterUid uint64, f func(p *Posting) error) error {
	l.RLock()
	defer l.RUnlock()
	if len(l.mutationMap) > maxDeltas {
		l.optimize()
	}
	return l.iterate(readTs, afterUid, f)
}

func (l *List) iterate(readTs uint64, afterUid uint64, f func(p *Posting) error) error {
	l.AssertRLock()
	for _, p := range l.plist.Postings {
		if p.Uid <= afterUid {
			continue
		}
		if err := f(p); err == ErrStopIteration {
			return nil
		} else if err != nil {
			return err
		}
	}
	for _, pl := range l.mutationMap {
		if pl.CommitTs == 0 || pl.CommitTs > readTs {
			continue
		}
		for _, p := range pl.Postings {
			if p.Uid > afterUid {
				if err := f(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (l *List) Uids(readTs uint64) ([]uint64, error) {
	var res []uint64
	err := l.Iterate(readTs, 0, func(p *Posting) error {
		res = append(res, p.Uid)
		return nil
	})
	sort.Slice(res, func(i, j int) bool { return res[i] < res[j] })
	return res, err
}

type LocalCache struct {
	sync.RWMutex
	startTs uint64
	plists  map[string]*List
}

func (lc *LocalCache) getNoStore(key string) *List {
	lc.RLock()
	defer lc.RUnlock()
	return lc.plists[key]
}

func (lc *LocalCache) Get(key []byte) *List {
	if pl := lc.getNoStore(string(key)); pl != nil {
		return pl
	}
	lc.Lock()
	defer lc.Unlock()
	if pl, ok := lc.plists[string(key)]; ok {
		return pl
	}
	pl := newList(key)
	lc.plists[string(key)] = pl
	return pl
}

func TestProbe(t *testing.T) {
	lc := &LocalCache{startTs: 100, plists: map[string]*List{}}
	key := []byte("\x00\x00\x06friend\x00\x00\x00\x00\x00\x00\x00\x01")
	pl := lc.Get(key)
	for i := uint64(1); i <= 6; i++ {
		pl.addMutation(10+i, 20+i, &Posting{Uid: 0x100 + i})
	}
	uids, err := lc.Get(key).Uids(lc.startTs)
	if err != nil {
		t.Fatal(err)
	}
	if len(uids) != 6 || uids[0] != 0x101 {
		t.Fatalf("uids = %x", uids)
	}
}
