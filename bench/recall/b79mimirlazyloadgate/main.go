// Project: grafana/mimir store-gateway (pkg/storegateway/indexheader/lazy_binary_reader.go), v2.10 development, July 2023.
// Bug: with -blocks-storage.bucket-store.index-header-lazy-loading-concurrency (PR #5313) LazyBinaryReader.load(), which is called
// with readerMx read-locked, took a permit from the lazy-loading gate before it swapped the read lock for the write lock. Two queries
// hitting the same unloaded block both hold the read lock; the one with the permit waits for readerMx.Lock while the other, still
// holding its read lock, waits for the gate permit. Fixed by PR #5605, which releases the read lock before waiting on the gate.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var errUnloadedWhileLoading = errors.New("the index-header has been concurrently unloaded")

// Gate is dskit's gate.Gate: a semaphore limiting concurrent operations.
type Gate interface {
	Start(ctx context.Context) error
	Done()
}

type blockingGate struct{ c chan struct{} }

func NewBlocking(maxConcurrent int) Gate { return &blockingGate{c: make(chan struct{}, maxConcurrent)} }

func (g *blockingGate) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case g.c <- struct{}{}:
		return nil
	}
}

func (g *blockingGate) Done() {
	select {
	case <-g.c:
	default:
		panic("gate.Done: more operations done than started")
	}
}

type Observer interface{ Observe(float64) }

// instrumentedGate records how long callers waited for their turn.
type instrumentedGate struct {
	gate     Gate
	duration Observer
}

func (g *instrumentedGate) Start(ctx context.Context) error {
	start := time.Now()
	err := g.gate.Start(ctx)
	g.duration.Observe(time.Since(start).Seconds())
	return err
}

func (g *instrumentedGate) Done() { g.gate.Done() }

type Reader interface {
	IndexVersion() (int, error)
	Close() error
}

type binaryReader struct{ version int }

func (b *binaryReader) IndexVersion() (int, error) { return b.version, nil }
func (b *binaryReader) Close() error               { return nil }

type LazyBinaryReader struct {
	ctx             context.Context
	filepath        string
	readerFactory   func() (Reader, error)
	lazyLoadingGate Gate

	readerMx  sync.RWMutex
	reader    Reader
	readerErr error
	usedAt    time.Time
}

// IndexVersion implements Reader.
func (r *LazyBinaryReader) IndexVersion() (int, error) {
	r.readerMx.RLock()
	defer r.readerMx.RUnlock()

	if err := r.load(); err != nil {
		return 0, err
	}
	return r.reader.IndexVersion()
}

// load ensures the underlying binary index-header reader has been successfully loaded.
// This function MUST be called with the read lock already acquired.
func (r *LazyBinaryReader) load() (returnErr error) {
	// Nothing to do if we already tried loading it.
	if r.reader != nil {
		return nil
	}
	if r.readerErr != nil {
		return r.readerErr
	}

	if err := r.lazyLoadingGate.Start(r.ctx); err != nil {
		return fmt.Errorf("failed to wait for turn: %w", err)
	}
	defer r.lazyLoadingGate.Done()

	// Take the write lock to ensure we'll try to load it only once. Take again
	// the read lock once done.
	r.readerMx.RUnlock()
	r.readerMx.Lock()
	defer func() {
		r.readerMx.Unlock()
		r.readerMx.RLock()

		// Between the write unlock and the subsequent read lock, the unload() may have run.
		if returnErr == nil && r.reader == nil {
			returnErr = errUnloadedWhileLoading
		}
	}()

	// Ensure none else tried to load it in the meanwhile.
	if r.reader != nil {
		return nil
	}
	if r.readerErr != nil {
		return r.readerErr
	}
	reader, err := r.readerFactory()
	if err != nil {
		r.readerErr = err
		return fmt.Errorf("lazy load index-header file at %s: %w", r.filepath, err)
	}
	r.reader = reader
	r.usedAt = time.Now()
	return nil
}

// slowObserver stands in for a histogram whose first observation is slow (e.g. a contended metrics registry).
type slowObserver struct{ once sync.Once }

func (o *slowObserver) Observe(float64) { o.once.Do(func() { time.Sleep(100 * time.Millisecond) }) }

func main() {
	// -blocks-storage.bucket-store.index-header-lazy-loading-concurrency=1
	gate := &instrumentedGate{gate: NewBlocking(1), duration: &slowObserver{}}
	r := &LazyBinaryReader{ctx: context.Background(), filepath: "01H6B5QW0KXJ9V9YF2R3ZK7T4M/index-header",
		readerFactory: func() (Reader, error) { return &binaryReader{version: 2}, nil }, lazyLoadingGate: gate}

	var wg sync.WaitGroup
	for i := 0; i < 2; i++ { // two Series() calls touching the same unloaded block
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := r.IndexVersion()
			fmt.Println("index version", v, err)
		}()
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
}
