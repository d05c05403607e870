// Modelled on containerd's content fetcher / x/sync/semaphore users: the
// number of concurrent layer downloads is limited by a counting semaphore
// whose capacity comes from a configuration field. A slot is always
// acquired before the tracker mutex is taken and released only after the
// mutex has been unlocked, so nobody ever waits for a slot while holding
// the mutex that a slot holder needs.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type FetchConfig struct {
	MaxConcurrentDownloads int
}

type status struct {
	ref    string
	offset int
	done   bool
}

type fetcher struct {
	limiter chan struct{} // counting semaphore, cap = MaxConcurrentDownloads

	mu       sync.Mutex // guards statuses
	statuses map[string]*status
}

func newFetcher(cfg FetchConfig) *fetcher {
	return &fetcher{
		limiter:  make(chan struct{}, cfg.MaxConcurrentDownloads),
		statuses: make(map[string]*status),
	}
}

func (f *fetcher) acquire(ctx context.Context) error {
	select {
	case f.limiter <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fetcher) release() { <-f.limiter }

func (f *fetcher) fetch(ctx context.Context, ref string, size int) error {
	if err := f.acquire(ctx); err != nil { // slot first, no lock held
		return err
	}
	f.mu.Lock()
	st, ok := f.statuses[ref]
	if !ok {
		st = &status{ref: ref}
		f.statuses[ref] = st
	}
	f.mu.Unlock()

	for st2 := 0; st2 < size; st2++ {
		time.Sleep(100 * time.Microsecond) // "network" I/O without the lock
		f.mu.Lock()
		st.offset++
		f.mu.Unlock()
	}

	f.mu.Lock()
	st.done = true
	f.mu.Unlock()
	f.release() // slot released after the mutex was unlocked
	return nil
}

func (f *fetcher) progress() (done, total int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.statuses {
		total++
		if s.done {
			done++
		}
	}
	return
}

func main() {
	cfg := FetchConfig{MaxConcurrentDownloads: 3}
	f := newFetcher(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := f.fetch(ctx, fmt.Sprintf("sha256:%02d", i), 5+i); err != nil {
				fmt.Println("fetch:", err)
			}
		}(i)
	}
	stop := make(chan struct{})
	reporterDone := make(chan struct{})
	go func() {
		defer close(reporterDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				f.progress()
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-reporterDone
	d, t := f.progress()
	fmt.Printf("downloaded %d/%d layers\n", d, t)
}
