// Modelled on Kubernetes' apimachinery util/errors aggregate as used by the
// garbage collector's parallel deletion: a concurrent error collector whose
// Error method takes its own lock. It is only formatted by goroutines that
// hold no lock, and the controller formats it after releasing its own mutex.

package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

type syncErrors struct {
	mu   sync.Mutex
	errs []error
}

func (e *syncErrors) Add(err error) {
	if err == nil {
		return
	}
	e.mu.Lock()
	e.errs = append(e.errs, err)
	e.mu.Unlock()
}

func (e *syncErrors) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.errs)
}

// Unwrap returns a snapshot so errors.Is/As can walk the aggregate.
func (e *syncErrors) Unwrap() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

func (e *syncErrors) Error() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	msgs := make([]string, 0, len(e.errs))
	for _, err := range e.errs {
		msgs = append(msgs, err.Error())
	}
	sort.Strings(msgs)
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

var errConflict = errors.New("the object has been modified")

type garbageCollector struct {
	mu        sync.Mutex
	attempts  map[string]int
	lastError string
}

func (gc *garbageCollector) deleteObject(uid string, errs *syncErrors) {
	gc.mu.Lock()
	gc.attempts[uid]++
	n := gc.attempts[uid]
	gc.mu.Unlock()
	if n%3 == 0 {
		errs.Add(fmt.Errorf("delete %s (attempt %d): %w", uid, n, errConflict))
	}
}

func (gc *garbageCollector) processBatch(batch int, uids []string) error {
	errs := &syncErrors{}
	var wg sync.WaitGroup
	for _, uid := range uids {
		wg.Add(1)
		go func(uid string) {
			defer wg.Done()
			gc.deleteObject(uid, errs)
		}(uid)
	}
	// A progress reporter formats the aggregate while workers still run; it
	// holds no lock of its own.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 5; i++ {
			_ = fmt.Sprintf("batch %d progress: %v", batch, errs)
		}
	}()
	wg.Wait()
	<-done

	if errs.Len() == 0 {
		return nil
	}
	err := fmt.Errorf("batch %d: %w", batch, errs)
	msg := err.Error() // formatted with gc.mu released
	gc.mu.Lock()
	gc.lastError = msg
	gc.mu.Unlock()
	return err
}

func main() {
	gc := &garbageCollector{attempts: make(map[string]int)}
	uids := make([]string, 12)
	for i := range uids {
		uids[i] = fmt.Sprintf("pod-%02d", i)
	}
	var wg sync.WaitGroup
	results := make([]error, 6)
	for b := 0; b < 6; b++ {
		wg.Add(1)
		go func(b int) {
			defer wg.Done()
			results[b] = gc.processBatch(b, uids)
		}(b)
	}
	wg.Wait()

	failed := 0
	for _, err := range results {
		if err != nil {
			failed++
			if !errors.Is(err, errConflict) {
				panic("aggregate lost the conflict error")
			}
		}
	}
	gc.mu.Lock()
	last := gc.lastError
	gc.mu.Unlock()
	fmt.Printf("failed batches=%d last error length=%d\n", failed, len(last))
}
