// Project: docker/moby (distribution/xfer, transfer.go)
// Bug: transferManager.transfer finds an in-progress transfer for the same key
// whose context was already cancelled and waits for it to be released while
// still holding tm.mu; the goroutine that removes the transfer from the map
// (and thereby releases it) needs tm.mu first.
// Fix: drop tm.mu while waiting for the cancelled transfer, then retry.
package b26mobyxfer_fixed

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

type Progress struct {
	ID      string
	Action  string
	Current int64
}

type ProgressOutput interface{ WriteProgress(Progress) error }

type Watcher struct {
	releaseChan chan struct{}
	running     chan struct{}
}

type Transfer interface {
	Watch(progressOutput ProgressOutput) *Watcher
	Release(*Watcher)
	Context() context.Context
	Close()
	Done() <-chan struct{}
	Released() <-chan struct{}
	Err() error
}

type DoFunc func(ctx context.Context, progressChan chan<- Progress) error

type transfer struct {
	mu           sync.Mutex
	ctx          context.Context
	cancel       context.CancelFunc
	watchers     map[chan struct{}]*Watcher
	running      chan struct{}
	released     chan struct{}
	closed       bool
	err          error
	lastProgress Progress
}

func newTransfer() *transfer {
	t := &transfer{
		watchers: make(map[chan struct{}]*Watcher),
		running:  make(chan struct{}),
		released: make(chan struct{}),
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t
}

func (t *transfer) Watch(progressOutput ProgressOutput) *Watcher {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := &Watcher{releaseChan: make(chan struct{}), running: make(chan struct{})}
	t.watchers[w.releaseChan] = w
	go func() {
		defer close(w.running)
		select {
		case <-w.releaseChan:
		case <-t.running:
			t.mu.Lock()
			p := t.lastProgress
			t.mu.Unlock()
			progressOutput.WriteProgress(p)
		}
	}()
	return w
}

func (t *transfer) Release(watcher *Watcher) {
	t.mu.Lock()
	delete(t.watchers, watcher.releaseChan)
	if len(t.watchers) == 0 {
		if t.closed {
			select {
			case <-t.released:
			default:
				close(t.released)
			}
		} else {
			t.cancel()
		}
	}
	t.mu.Unlock()
	close(watcher.releaseChan)
	<-watcher.running
}

func (t *transfer) Close() {
	t.mu.Lock()
	t.closed = true
	if len(t.watchers) == 0 {
		close(t.released)
	}
	t.mu.Unlock()
}

func (t *transfer) Context() context.Context  { return t.ctx }
func (t *transfer) Done() <-chan struct{}     { return t.running }
func (t *transfer) Released() <-chan struct{} { return t.released }
func (t *transfer) Err() error                { t.mu.Lock(); defer t.mu.Unlock(); return t.err }

type transferManager struct {
	mu              sync.Mutex
	activeTransfers int
	transfers       map[string]Transfer
}

func newTransferManager() *transferManager {
	return &transferManager{transfers: make(map[string]Transfer)}
}

func (tm *transferManager) transfer(key string, xferFunc DoFunc, progressOutput ProgressOutput) (Transfer, *Watcher) {
	tm.mu.Lock()
	defer tm.mu.Unlock()

	for {
		xfer, present := tm.transfers[key]
		if !present {
			break
		}
		watcher := xfer.Watch(progressOutput)
		select {
		case <-xfer.Context().Done():
			xfer.Release(watcher)
			tm.mu.Unlock()
			<-xfer.Released()
			tm.mu.Lock()
		default:
			return xfer, watcher
		}
	}

	xfer := newTransfer()
	tm.transfers[key] = xfer
	tm.activeTransfers++
	watcher := xfer.Watch(progressOutput)
	progressChan := make(chan Progress, 16)

	go func() {
		err := xferFunc(xfer.ctx, progressChan)
		close(progressChan)
		xfer.mu.Lock()
		for p := range progressChan {
			xfer.lastProgress = p
		}
		xfer.err = err
		xfer.mu.Unlock()
		close(xfer.running)
	}()
	go func() {
		<-xfer.Done()
		tm.mu.Lock()
		delete(tm.transfers, key)
		tm.activeTransfers--
		tm.mu.Unlock()
		xfer.Close()
	}()
	return xfer, watcher
}

type chanOutput chan Progress

func (o chanOutput) WriteProgress(p Progress) error { o <- p; return nil }

func downloadLayer(id string, cleanup time.Duration) DoFunc {
	return func(ctx context.Context, progressChan chan<- Progress) error {
		progressChan <- Progress{ID: id, Action: "Downloading", Current: 512}
		select {
		case <-ctx.Done():
			time.Sleep(cleanup) // remove partially written layer tarball
			return ctx.Err()
		case <-time.After(cleanup):
			progressChan <- Progress{ID: id, Action: "Download complete", Current: 4096}
			return nil
		}
	}
}

func TestProbe(t *testing.T) {
	tm := newTransferManager()
	key := "sha256:8f5a1b2c"
	out := make(chanOutput, 4)

	xfer, w := tm.transfer(key, downloadLayer("8f5a1b2c", 100*time.Millisecond), out)
	xfer.Release(w) // first `docker pull` interrupted by the user

	time.Sleep(20 * time.Millisecond)
	done := make(chan error, 1)
	go func() {
		xfer2, w2 := tm.transfer(key, downloadLayer("8f5a1b2c", 10*time.Millisecond), out)
		<-xfer2.Done()
		xfer2.Release(w2)
		done <- xfer2.Err()
	}()
	if err := <-done; err != nil {
		t.Fatalf("second pull failed: %v", err)
	}
	fmt.Println("pulled", key, (<-out).Action)
}
