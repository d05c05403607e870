// Project: stellar/soroban-rpc (now stellar/stellar-rpc), the Soroban JSON-RPC server, v21.x.
// Files/functions: cmd/soroban-rpc/internal/events/events.go (MemoryStore.IngestEvents,
// MemoryStore.Scan, MemoryStore.validateRange), internal/ledgerbucketwindow
// (LedgerBucketWindow.Append), internal/ingest/service.go (Service.ingestLedgerCloseMeta),
// internal/methods/get_events.go (eventsRPCHandler.getEvents).
// Issue/PR: stellar/stellar-rpc#167 (soroban-rpc) "Fix deadlock on events ingestion error".
//
// IngestEvents builds the bucket for a ledger, takes m.lock and appends the bucket to the
// eventsByLedger window. Append refuses a ledger that does not directly follow the last
// one ("ledgers not contiguous"), and IngestEvents returned that error without releasing
// m.lock. The ingestion service logs the error and goes on, but every getEvents request
// now calls Scan, whose m.lock.RLock waits forever, as does the next IngestEvents. The
// fix unlocks the mutex before returning the error.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- internal/ledgerbucketwindow ----

type LedgerBucket[T any] struct {
	LedgerSeq            uint32
	LedgerCloseTimestamp int64
	BucketContent        T
}

type LedgerBucketWindow[T any] struct {
	buckets []LedgerBucket[T]
	start   uint32
}

func NewLedgerBucketWindow[T any](retentionWindow uint32) *LedgerBucketWindow[T] {
	return &LedgerBucketWindow[T]{buckets: make([]LedgerBucket[T], 0, retentionWindow)}
}

func (w *LedgerBucketWindow[T]) Len() uint32 { return uint32(len(w.buckets)) }

func (w *LedgerBucketWindow[T]) Get(i uint32) *LedgerBucket[T] {
	return &w.buckets[(w.start+i)%uint32(len(w.buckets))]
}

// Append adds a new bucket to the window. If the window is full the oldest bucket is evicted.
func (w *LedgerBucketWindow[T]) Append(bucket LedgerBucket[T]) (*LedgerBucket[T], error) {
	length := w.Len()
	if length > 0 {
		expectedLedgerSequence := w.buckets[w.start].LedgerSeq + length
		if expectedLedgerSequence != bucket.LedgerSeq {
			return nil, fmt.Errorf("error appending ledgers: ledgers not contiguous: expected ledger sequence %v but received %v", expectedLedgerSequence, bucket.LedgerSeq)
		}
	}
	if length < uint32(cap(w.buckets)) {
		w.buckets = append(w.buckets, bucket)
		return nil, nil
	}
	evicted := w.buckets[w.start]
	w.buckets[w.start] = bucket
	w.start = (w.start + 1) % length
	return &evicted, nil
}

// ---- internal/events ----

type event struct {
	contractID string
	topic      string
}

type LedgerCloseMeta struct {
	Sequence  uint32
	CloseTime int64
	Events    []event
}

type Range struct{ Start, End uint32 }

type ScanFunction func(ledger uint32, ev event) bool

type MemoryStore struct {
	networkPassphrase string
	// lock protects the mutable fields below
	lock           sync.RWMutex
	eventsByLedger *LedgerBucketWindow[[]event]
}

func readEvents(networkPassphrase string, meta LedgerCloseMeta) ([]event, error) {
	if networkPassphrase == "" {
		return nil, errors.New("missing network passphrase")
	}
	return meta.Events, nil
}

// IngestEvents adds new events from the given ledger into the store.
func (m *MemoryStore) IngestEvents(ledgerCloseMeta LedgerCloseMeta) error {
	// no need to acquire the lock because the networkPassphrase field is immutable
	events, err := readEvents(m.networkPassphrase, ledgerCloseMeta)
	if err != nil {
		return err
	}
	bucket := LedgerBucket[[]event]{
		LedgerSeq:            ledgerCloseMeta.Sequence,
		LedgerCloseTimestamp: ledgerCloseMeta.CloseTime,
		BucketContent:        events,
	}
	m.lock.Lock()
	if _, err = m.eventsByLedger.Append(bucket); err != nil {
		m.lock.Unlock()
		return err
	}
	m.lock.Unlock()
	return nil
}

func (m *MemoryStore) validateRange(eventRange *Range) error {
	if m.eventsByLedger.Len() == 0 {
		return errors.New("event store is empty")
	}
	return nil
}

// Scan applies f on all the events occurring in the given range.
func (m *MemoryStore) Scan(eventRange Range, f ScanFunction) (uint32, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()

	if err := m.validateRange(&eventRange); err != nil {
		return 0, err
	}
	var latest uint32
	for i := uint32(0); i < m.eventsByLedger.Len(); i++ {
		bucket := m.eventsByLedger.Get(i)
		latest = bucket.LedgerSeq
		if bucket.LedgerSeq < eventRange.Start || bucket.LedgerSeq >= eventRange.End {
			continue
		}
		for _, ev := range bucket.BucketContent {
			if !f(bucket.LedgerSeq, ev) {
				return latest, nil
			}
		}
	}
	return latest, nil
}

// ---- internal/ingest and internal/methods ----

type Service struct{ eventStore *MemoryStore }

func (s *Service) ingestLedgerCloseMeta(meta LedgerCloseMeta) error {
	if err := s.eventStore.IngestEvents(meta); err != nil {
		return fmt.Errorf("could not ingest events of ledger %d: %w", meta.Sequence, err)
	}
	return nil
}

type eventsRPCHandler struct{ scanner *MemoryStore }

func (h eventsRPCHandler) getEvents(start, end uint32) (int, error) {
	found := 0
	_, err := h.scanner.Scan(Range{Start: start, End: end}, func(ledger uint32, ev event) bool {
		found++
		return true
	})
	return found, err
}

func main() {
	store := &MemoryStore{networkPassphrase: "Test SDF Network ; September 2015", eventsByLedger: NewLedgerBucketWindow[[]event](17280)}
	svc := &Service{eventStore: store}
	rpc := eventsRPCHandler{scanner: store}

	done := make(chan struct{})
	go func() { // ingestion loop; captive core skips ledger 12 after a restart
		defer close(done)
		for _, seq := range []uint32{10, 11, 13} {
			meta := LedgerCloseMeta{Sequence: seq, CloseTime: time.Now().Unix(), Events: []event{{"CA3D", "transfer"}}}
			if err := svc.ingestLedgerCloseMeta(meta); err != nil {
				fmt.Println("ingest:", err)
			}
		}
	}()
	<-done
	n, err := rpc.getEvents(10, 14)
	fmt.Println("getEvents:", n, err)
}
