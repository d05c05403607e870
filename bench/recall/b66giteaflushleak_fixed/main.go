// Shape of gitea modules/queue: WrappedUniqueQueue flushing and graceful shutdown.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Data interface{}

type HandlerFunc func(...Data)

type Flushable interface {
	FlushWithContext(ctx context.Context) error
	IsEmpty() bool
}

type Shutdownable interface {
	Shutdown()
	Terminate()
}

// ChannelQueue is the internal queue the wrapper delegates to.
type ChannelQueue struct {
	mu       sync.Mutex
	pending  int
	dataChan chan Data
	handle   HandlerFunc
}

func NewChannelQueue(handle HandlerFunc) *ChannelQueue {
	q := &ChannelQueue{dataChan: make(chan Data, 10), handle: handle}
	go func() {
		for d := range q.dataChan {
			q.handle(d)
			q.mu.Lock()
			q.pending--
			q.mu.Unlock()
		}
	}()
	return q
}

func (q *ChannelQueue) Push(d Data) {
	q.mu.Lock()
	q.pending++
	q.mu.Unlock()
	q.dataChan <- d
}

func (q *ChannelQueue) IsEmpty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending == 0
}

func (q *ChannelQueue) FlushWithContext(ctx context.Context) error {
	for !q.IsEmpty() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

func (q *ChannelQueue) Shutdown()  { fmt.Println("internal queue: shutdown") }
func (q *ChannelQueue) Terminate() { fmt.Println("internal queue: terminate") }

type WrappedUniqueQueue struct {
	lock     sync.Mutex
	internal Flushable
	name     string
}

func (q *WrappedUniqueQueue) Run(handle HandlerFunc) {
	q.lock.Lock()
	q.internal = NewChannelQueue(handle)
	q.lock.Unlock()
}

func (q *WrappedUniqueQueue) Push(d Data) {
	q.lock.Lock()
	internal := q.internal.(*ChannelQueue)
	q.lock.Unlock()
	internal.Push(d)
}

func (q *WrappedUniqueQueue) flushInternalWithContext(ctx context.Context) error {
	q.lock.Lock()
	if q.internal == nil {
		q.lock.Unlock()
		return fmt.Errorf("not ready to flush wrapped queue %s yet", q.name)
	}
	q.lock.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	return q.internal.FlushWithContext(ctx)
}

func (q *WrappedUniqueQueue) FlushWithContext(ctx context.Context) error {
	errChan := make(chan error, 1)
	go func() {
		errChan <- q.flushInternalWithContext(ctx)
		close(errChan)
	}()
	select {
	case err := <-errChan:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (q *WrappedUniqueQueue) Flush(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return q.FlushWithContext(ctx)
}

func (q *WrappedUniqueQueue) Shutdown() {
	q.lock.Lock()
	defer q.lock.Unlock()
	if s, ok := q.internal.(Shutdownable); ok {
		s.Shutdown()
	}
}

// Manager mimics modules/graceful: hooks registered with RunAtShutdown.
type Manager struct {
	mu    sync.Mutex
	hooks []func()
}

func (g *Manager) RunAtShutdown(f func()) {
	g.mu.Lock()
	g.hooks = append(g.hooks, f)
	g.mu.Unlock()
}

func (g *Manager) doShutdown() {
	g.mu.Lock()
	hooks := append([]func(){}, g.hooks...)
	g.mu.Unlock()
	for _, h := range hooks {
		h()
	}
}

func main() {
	g := &Manager{}
	q := &WrappedUniqueQueue{name: "code_indexer"}
	q.Run(func(data ...Data) {
		time.Sleep(10 * time.Millisecond)
		fmt.Println("indexed", data)
	})
	g.RunAtShutdown(q.Shutdown)

	q.Push("repo-7")
	if err := q.Flush(time.Second); err != nil {
		fmt.Println("flush:", err)
	}
	fmt.Println("flushed; shutting down")
	g.doShutdown()
	fmt.Println("shutdown complete")
}
