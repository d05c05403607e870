// kubernetes-sigs/controller-runtime, pkg/controller/priorityqueue/priorityqueue.go
// (priorityqueue.spin and its ready-items pass, GetWithPriority, ShutDown).
// Reported as controller-runtime#3538 "Deadlock in PriorityQueue on shutdown",
// fixed by PR #3540 "Fix PriorityQueue deadlock on shutdown".
//
// The queue's spin goroutine hands ready items to waiting workers: under w.lock
// (line 174) and w.lockedLock it walks the btree and, for every waiter it has
// counted, does an unbuffered send on w.get (line 202) - still holding both
// locks. GetWithPriority counts itself as a waiter and then selects on w.get
// or w.done, so after ShutDown closes w.done a worker can leave without
// receiving and without uncounting itself. If spin was already awake it keeps
// sending to a worker that is gone and blocks forever with w.lock held; every
// later GetWithPriority (waiters++ under w.lock), AddWithOpts, Len and Done
// then stalls, and the controller never finishes shutting down. The fix
// selects on w.done around the send so spin gives the locks back.
//
// main runs the reporter's loop (20 workers doing AddWithOpts/GetWithPriority,
// then ShutDown); after the workers are gone it calls Len, which needs w.lock.
//
// FIXED TWIN: same program with the project's fix applied; the line numbers
// above refer to the unfixed probe in ../b39ctrlruntimepqshutdown/main.go.
package main

import (
	"fmt"
	"math/rand"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// AddOpts describes the options for adding items to the queue.
type AddOpts struct {
	After    time.Duration
	Priority int
}

type item[T comparable] struct {
	Key          T
	AddedCounter uint64
	Priority     int
	ReadyAt      *time.Time
}

func less[T comparable](a, b *item[T]) bool {
	if a.ReadyAt == nil && b.ReadyAt != nil {
		return true
	}
	if b.ReadyAt == nil && a.ReadyAt != nil {
		return false
	}
	if a.ReadyAt != nil && b.ReadyAt != nil && !a.ReadyAt.Equal(*b.ReadyAt) {
		return a.ReadyAt.Before(*b.ReadyAt)
	}
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return a.AddedCounter < b.AddedCounter
}

// sortedItems stands in for the github.com/google/btree BTreeG the queue uses.
type sortedItems[T comparable] struct{ items []*item[T] }

func (s *sortedItems[T]) ReplaceOrInsert(it *item[T]) {
	s.items = append(s.items, it)
	sort.Slice(s.items, func(i, j int) bool { return less(s.items[i], s.items[j]) })
}

func (s *sortedItems[T]) Delete(it *item[T]) {
	for i, x := range s.items {
		if x == it {
			s.items = append(s.items[:i], s.items[i+1:]...)
			return
		}
	}
}

func (s *sortedItems[T]) Ascend(iter func(*item[T]) bool) {
	for _, it := range append([]*item[T](nil), s.items...) {
		if !iter(it) {
			return
		}
	}
}

type priorityqueue[T comparable] struct {
	// lock has to be acquired for any access any of items, queue, addedCounter,
	// becameReady or waiters.
	lock         sync.Mutex
	items        map[T]*item[T]
	queue        *sortedItems[T]
	addedCounter uint64
	becameReady  map[T]struct{}
	// waiters is the number of routines blocked in Get, we use it to determine
	// if we can push items.
	waiters int

	itemOrWaiterAdded chan struct{}

	// locked contains the keys we handed out through Get() and that haven't
	// yet been returned through Done().
	locked     map[T]struct{}
	lockedLock sync.RWMutex

	shutdown atomic.Bool
	done     chan struct{}
	get      chan item[T]
	now      func() time.Time
}

func New[T comparable]() *priorityqueue[T] {
	pq := &priorityqueue[T]{
		items:             map[T]*item[T]{},
		queue:             &sortedItems[T]{},
		becameReady:       map[T]struct{}{},
		itemOrWaiterAdded: make(chan struct{}, 1),
		locked:            map[T]struct{}{},
		done:              make(chan struct{}),
		get:               make(chan item[T]),
		now:               time.Now,
	}
	go pq.spin()
	return pq
}

func (w *priorityqueue[T]) AddWithOpts(o AddOpts, items ...T) {
	if w.shutdown.Load() {
		return
	}
	w.lock.Lock()
	defer w.lock.Unlock()

	for _, key := range items {
		var readyAt *time.Time
		if o.After > 0 {
			t := w.now().Add(o.After)
			readyAt = &t
		}
		if _, ok := w.items[key]; !ok {
			it := &item[T]{Key: key, AddedCounter: w.addedCounter, Priority: o.Priority, ReadyAt: readyAt}
			w.items[key] = it
			w.queue.ReplaceOrInsert(it)
			w.addedCounter++
			continue
		}
		it := w.items[key]
		w.queue.Delete(it)
		if o.Priority > it.Priority {
			it.Priority = o.Priority
		}
		w.queue.ReplaceOrInsert(it)
	}

	if len(items) > 0 {
		w.notifyItemOrWaiterAdded()
	}
}

func (w *priorityqueue[T]) notifyItemOrWaiterAdded() {
	select {
	case w.itemOrWaiterAdded <- struct{}{}:
	default:
	}
}

func (w *priorityqueue[T]) spin() {
	for {
		select {
		case <-w.done:
			return
		case <-w.itemOrWaiterAdded:
		}

		func() {
			w.lock.Lock()
			defer w.lock.Unlock()

			w.lockedLock.Lock()
			defer w.lockedLock.Unlock()

			// manipulating the tree from within Ascend might lead to panics, so
			// track what we want to delete and do it after we are done ascending.
			var toDelete []*item[T]
			w.queue.Ascend(func(item *item[T]) bool {
				if item.ReadyAt != nil && item.ReadyAt.After(w.now()) {
					return false
				}
				if w.waiters == 0 {
					// Have to keep iterating here to ensure we update metrics
					// for further items that became ready and set nextReady.
					return true
				}
				// Item is locked, we can not hand it out
				if _, ok := w.locked[item.Key]; ok {
					return true
				}

				w.locked[item.Key] = struct{}{}
				w.waiters--
				delete(w.items, item.Key)
				toDelete = append(toDelete, item)
				delete(w.becameReady, item.Key)
				select {
				case w.get <- *item:
				case <-w.done:
					return false
				}

				return true
			})

			for _, item := range toDelete {
				w.queue.Delete(item)
			}
		}()
	}
}

func (w *priorityqueue[T]) GetWithPriority() (_ T, priority int, shutdown bool) {
	if w.shutdown.Load() {
		var zero T
		return zero, 0, true
	}

	w.lock.Lock()
	w.waiters++
	w.lock.Unlock()

	w.notifyItemOrWaiterAdded()

	select {
	case <-w.done:
		// Return if the queue was shutdown while we were already waiting for an item here.
		var zero T
		return zero, 0, true
	case item := <-w.get:
		return item.Key, item.Priority, w.shutdown.Load()
	}
}

func (w *priorityqueue[T]) Done(item T) {
	w.lockedLock.Lock()
	defer w.lockedLock.Unlock()
	delete(w.locked, item)
	w.notifyItemOrWaiterAdded()
}

func (w *priorityqueue[T]) ShutDown() {
	w.shutdown.Store(true)
	close(w.done)
}

// Len returns the number of items that are ready to be picked up.
func (w *priorityqueue[T]) Len() int {
	w.lock.Lock()
	defer w.lock.Unlock()
	return len(w.items)
}

func main() {
	var rounds atomic.Int64
	go func() { // watchdog: no finished round for 2s
		last := int64(-1)
		for {
			time.Sleep(2 * time.Second)
			n := rounds.Load()
			if n == last {
				fmt.Printf("DEADLOCK: round %d never finished\n", n)
				os.Exit(2)
			}
			last = n
		}
	}()
	for i := 0; i < 300; i++ {
		pq := New[int]()
		wg := sync.WaitGroup{}
		for j := 0; j < 20; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					pq.AddWithOpts(AddOpts{Priority: rand.Intn(10)}, rand.Int())
					key, _, shutdown := pq.GetWithPriority()
					if shutdown {
						return
					}
					pq.Done(key)
				}
			}()
		}
		time.Sleep(2 * time.Millisecond)
		pq.ShutDown()
		wg.Wait()
		_ = pq.Len()
		rounds.Add(1)
	}
	fmt.Println("300 shutdowns completed")
}
