// Shape of gitea modules/queue: a WrappedUniqueQueue that buffers pushes until
// its delayed internal queue is ready.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Data interface{}

type HandlerFunc func(...Data)

var ErrAlreadyInQueue = errors.New("already in queue")

type Queue interface {
	Run()
	Push(Data) error
}

type UniqueQueue interface {
	Queue
	PushFunc(Data, func() error) error
	Has(Data) (bool, error)
}

// ChannelUniqueQueue is the internal queue created once the wrapper's
// underlying configuration becomes available.
type ChannelUniqueQueue struct {
	lock     sync.Mutex
	table    map[Data]bool
	dataChan chan Data
	handle   HandlerFunc
}

func NewChannelUniqueQueue(handle HandlerFunc, length int) *ChannelUniqueQueue {
	q := &ChannelUniqueQueue{table: map[Data]bool{}, dataChan: make(chan Data, length)}
	q.handle = func(data ...Data) {
		for _, datum := range data {
			q.lock.Lock()
			delete(q.table, datum)
			q.lock.Unlock()
			handle(datum)
		}
	}
	return q
}

func (q *ChannelUniqueQueue) Run() {
	go func() {
		for d := range q.dataChan {
			q.handle(d)
		}
	}()
}

func (q *ChannelUniqueQueue) Push(data Data) error { return q.PushFunc(data, nil) }

func (q *ChannelUniqueQueue) PushFunc(data Data, fn func() error) error {
	q.lock.Lock()
	if q.table[data] {
		q.lock.Unlock()
		return ErrAlreadyInQueue
	}
	q.table[data] = true
	q.lock.Unlock()
	q.dataChan <- data
	return nil
}

func (q *ChannelUniqueQueue) Has(data Data) (bool, error) {
	q.lock.Lock()
	defer q.lock.Unlock()
	return q.table[data], nil
}

type delayedStarter struct {
	internal Queue
	name     string
}

func (q *delayedStarter) setInternal(handle HandlerFunc) {
	time.Sleep(20 * time.Millisecond) // the underlying queue became available late
	q.internal = NewChannelUniqueQueue(handle, 10)
}

type WrappedUniqueQueue struct {
	delayedStarter
	lock    sync.Mutex
	handle  HandlerFunc
	channel chan Data
	table   map[Data]bool
	tlock   sync.Mutex
	ready   bool
}

func NewWrappedUniqueQueue(name string, handle HandlerFunc) UniqueQueue {
	wrapped := &WrappedUniqueQueue{
		delayedStarter: delayedStarter{name: name},
		channel:        make(chan Data, 10),
		table:          map[Data]bool{},
	}
	wrapped.handle = func(data ...Data) {
		for _, datum := range data {
			wrapped.tlock.Lock()
			if !wrapped.ready {
				wrapped.tlock.Lock()
				delete(wrapped.table, datum)
				if len(wrapped.table) == 0 {
					wrapped.ready = true
				}
			}
			wrapped.tlock.Unlock()
			handle(datum)
		}
	}
	return wrapped
}

func (q *WrappedUniqueQueue) Push(data Data) error { return q.PushFunc(data, nil) }

func (q *WrappedUniqueQueue) PushFunc(data Data, fn func() error) error {
	q.tlock.Lock()
	if q.ready {
		q.tlock.Unlock()
		return q.internal.(UniqueQueue).PushFunc(data, fn)
	}
	if q.table[data] {
		q.tlock.Unlock()
		return ErrAlreadyInQueue
	}
	q.table[data] = true
	q.tlock.Unlock()
	q.channel <- data
	return nil
}

func (q *WrappedUniqueQueue) Has(data Data) (bool, error) {
	q.tlock.Lock()
	defer q.tlock.Unlock()
	if q.ready {
		return q.internal.(UniqueQueue).Has(data)
	}
	return q.table[data], nil
}

func (q *WrappedUniqueQueue) Run() {
	q.lock.Lock()
	if q.internal == nil {
		q.setInternal(q.handle)
		q.lock.Unlock()
		go func() {
			for data := range q.channel {
				_ = q.internal.Push(data)
			}
		}()
	} else {
		q.lock.Unlock()
	}
	q.internal.Run()
}

func main() {
	var handled sync.WaitGroup
	handled.Add(1)
	q := NewWrappedUniqueQueue("repo-archive", func(data ...Data) {
		for _, d := range data {
			fmt.Println("archived", d)
			handled.Done()
		}
	})
	_ = q.Push("repo-42") // pushed before the internal queue exists: buffered in the wrapper's table
	q.Run()
	time.Sleep(50 * time.Millisecond)
	has, _ := q.Has("repo-42")
	fmt.Println("still queued:", has)
	handled.Wait()
}
