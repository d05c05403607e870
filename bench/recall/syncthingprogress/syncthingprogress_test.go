// Project: syncthing (lib/model/progressemitter.go, sharedpullerstate.go).
//
// Bug (approximate): ProgressEmitter.serve handles its timer tick by taking t.mut
// and calling sendDownloadProgressEventLocked. That helper builds the per-folder
// totals through computeProgressUpdates, which calls the public
// ProgressEmitter.BytesCompleted(folder) -- and BytesCompleted takes t.mut again.
// sync.Mutex is not reentrant, so the emitter goroutine deadlocks on its own lock
// on the first tick that has a puller registered; afterwards Register/Deregister
// from every puller block too and syncing stops.
// Fix: the *Locked path uses an internal bytesCompletedLocked helper.
package syncthingprogress

import (
	"context"
	"sync"
	"testing"
	"time"
)

type sharedPullerState struct {
	folder, file string

	mut        sync.RWMutex
	copyTotal  int
	copyNeeded int
	pullTotal  int
	pullNeeded int
	blockSize  int
}

func (s *sharedPullerState) Progress() (done, total int64) {
	s.mut.RLock()
	defer s.mut.RUnlock()
	total = int64((s.copyTotal + s.pullTotal) * s.blockSize)
	done = total - int64((s.copyNeeded+s.pullNeeded)*s.blockSize)
	return done, total
}

type DownloadProgressEvent map[string]map[string]int64 // folder -> file -> bytes done

type ProgressEmitter struct {
	interval time.Duration
	events   chan DownloadProgressEvent

	mut              sync.Mutex
	registry         map[string]map[string]*sharedPullerState // folder: name: puller
	lastUpdate       time.Time
	lastEventReqDone bool
}

func NewProgressEmitter(interval time.Duration) *ProgressEmitter {
	return &ProgressEmitter{
		interval: interval,
		events:   make(chan DownloadProgressEvent, 8),
		registry: make(map[string]map[string]*sharedPullerState),
	}
}

func (t *ProgressEmitter) serve(ctx context.Context) {
	ticker := time.NewTicker(t.interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			t.mut.Lock()
			t.sendDownloadProgressEventLocked()
			t.lastUpdate = time.Now()
			t.mut.Unlock()
		}
	}
}

// sendDownloadProgressEventLocked must be called with t.mut held.
func (t *ProgressEmitter) sendDownloadProgressEventLocked() {
	output := t.computeProgressUpdates()
	if len(output) == 0 {
		return
	}
	select {
	case t.events <- output:
	default:
	}
}

func (t *ProgressEmitter) computeProgressUpdates() DownloadProgressEvent {
	output := make(DownloadProgressEvent)
	for folder, pullers := range t.registry {
		if t.BytesCompleted(folder) == 0 {
			continue
		}
		output[folder] = make(map[string]int64)
		for name, puller := range pullers {
			done, _ := puller.Progress()
			output[folder][name] = done
		}
	}
	return output
}

// BytesCompleted returns the number of bytes completed in the given folder.
func (t *ProgressEmitter) BytesCompleted(folder string) (bytes int64) {
	t.mut.Lock() // DEADLOCK HERE (t.mut already held by serve)
	defer t.mut.Unlock()
	for _, s := range t.registry[folder] {
		done, _ := s.Progress()
		bytes += done
	}
	return bytes
}

func (t *ProgressEmitter) Register(s *sharedPullerState) {
	t.mut.Lock()
	defer t.mut.Unlock()
	if t.registry[s.folder] == nil {
		t.registry[s.folder] = make(map[string]*sharedPullerState)
	}
	t.registry[s.folder][s.file] = s
}

func (t *ProgressEmitter) Deregister(s *sharedPullerState) {
	t.mut.Lock()
	defer t.mut.Unlock()
	delete(t.registry[s.folder], s.file)
}

func TestProgressEmitterEmitsDownloadProgress(t *testing.T) {
	pe := NewProgressEmitter(10 * time.Millisecond)
	pe.Register(&sharedPullerState{folder: "default", file: "movie.mkv",
		copyTotal: 4, copyNeeded: 1, pullTotal: 4, pullNeeded: 3, blockSize: 128 << 10})

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pe.serve(ctx)
	}()

	ev := <-pe.events
	cancel()
	wg.Wait()
	if ev["default"]["movie.mkv"] != 4*128<<10 {
		t.Fatalf("unexpected progress event %v", ev)
	}
}
