// Project: thanos (pkg/query/storeset.go)
// Bug: storeRef.Update() holds s.mtx.Lock() and logs the change with the
// storeRef itself as a %v argument. fmt calls storeRef.String(), which calls
// TimeRange() and LabelSets(), both taking s.mtx.RLock() on the same mutex,
// so the StoreSet update loop hangs on the first store whose metadata changes.
// Fix: log the plain address (and the new values) instead of the storeRef, so
// String() is never invoked while s.mtx is held.

package b21thanosstoreset

import (
	"bytes"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"testing"
)

type Label struct{ Name, Value string }
type Labels []Label

func (ls Labels) String() string {
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%s=%q", l.Name, l.Value))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

type StoreType int

const (
	StoreTypeSidecar StoreType = iota
	StoreTypeRule
	StoreTypeStore
)

type storeRef struct {
	mtx       sync.RWMutex
	addr      string
	isStrict  bool
	storeType StoreType
	labelSets []Labels
	minTime   int64
	maxTime   int64
	logger    *log.Logger
}

func (s *storeRef) Update(labelSets []Labels, minTime, maxTime int64, storeType StoreType) {
	s.mtx.Lock()
	defer s.mtx.Unlock()

	if s.minTime != minTime || s.maxTime != maxTime {
		s.logger.Printf("msg=%q store=%v mint=%d maxt=%d", "store time range changed", s, minTime, maxTime)
	}
	s.storeType = storeType
	s.labelSets = labelSets
	s.minTime = minTime
	s.maxTime = maxTime
}

func (s *storeRef) StoreType() StoreType {
	s.mtx.RLock()
	defer s.mtx.RUnlock()
	return s.storeType
}

func (s *storeRef) LabelSets() []Labels {
	s.mtx.RLock()
	defer s.mtx.RUnlock()
	return s.labelSets
}

func (s *storeRef) TimeRange() (mint, maxt int64) {
	s.mtx.RLock()
	defer s.mtx.RUnlock()
	return s.minTime, s.maxTime
}

func (s *storeRef) String() string {
	mint, maxt := s.TimeRange()
	return fmt.Sprintf("Addr: %s LabelSets: %v Mint: %d Maxt: %d", s.addr, s.LabelSets(), mint, maxt)
}

func (s *storeRef) Addr() string { return s.addr }

type infoResponse struct {
	labelSets []Labels
	minTime   int64
	maxTime   int64
	storeType StoreType
}

type StoreSet struct {
	updateMtx sync.Mutex
	storesMtx sync.RWMutex
	stores    map[string]*storeRef
	specs     func() map[string]infoResponse
	logger    *log.Logger
}

func NewStoreSet(logger *log.Logger, specs func() map[string]infoResponse) *StoreSet {
	return &StoreSet{stores: make(map[string]*storeRef), specs: specs, logger: logger}
}

// Update refreshes metadata of all known stores from their Info() responses.
func (s *StoreSet) Update() {
	s.updateMtx.Lock()
	defer s.updateMtx.Unlock()

	infos := s.specs()
	addrs := make([]string, 0, len(infos))
	for addr := range infos {
		addrs = append(addrs, addr)
	}
	sort.Strings(addrs)

	for _, addr := range addrs {
		info := infos[addr]
		s.storesMtx.Lock()
		st, ok := s.stores[addr]
		if !ok {
			st = &storeRef{addr: addr, logger: s.logger}
			s.stores[addr] = st
		}
		s.storesMtx.Unlock()
		st.Update(info.labelSets, info.minTime, info.maxTime, info.storeType)
	}
}

func (s *StoreSet) Get() []*storeRef {
	s.storesMtx.RLock()
	defer s.storesMtx.RUnlock()
	out := make([]*storeRef, 0, len(s.stores))
	for _, st := range s.stores {
		out = append(out, st)
	}
	return out
}

func TestStoreSetUpdateLogsChangedTimeRange(t *testing.T) {
	var logBuf bytes.Buffer
	logger := log.New(&logBuf, "storeset: ", log.LstdFlags)
	specs := func() map[string]infoResponse {
		return map[string]infoResponse{
			"127.0.0.1:10901": {
				labelSets: []Labels{{{Name: "cluster", Value: "eu-1"}}},
				minTime:   1000,
				maxTime:   2000,
				storeType: StoreTypeSidecar,
			},
		}
	}
	ss := NewStoreSet(logger, specs)

	done := make(chan struct{})
	go func() {
		defer close(done)
		ss.Update()
	}()
	<-done
	if n := len(ss.Get()); n != 1 {
		t.Fatalf("expected 1 store, got %d", n)
	}
}
