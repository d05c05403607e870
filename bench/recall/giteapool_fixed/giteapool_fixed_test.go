// Project: go-gitea/gitea (modules/queue WorkerPool)
// Bug: (reconstruction) when a Push found the data channel still full after the
//      block timeout, the pool boosted workers in a loop that took p.lock on every
//      iteration; on reaching maxNumberOfWorkers it broke out of the loop with
//      p.lock still held. The pushing goroutine went on, and every later user of
//      p.lock (NumberOfWorkers from the admin queue page, SetPoolSettings, a worker
//      exiting) blocked forever.
// Fix: unlock p.lock before breaking out of the boost loop.

package giteapool_fixed

import (
	"context"
	"log"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type Data interface{}

type HandlerFunc func(...Data) (unhandled []Data)

type WorkerPoolConfiguration struct {
	QueueLength  int
	BatchLength  int
	BlockTimeout time.Duration
	BoostTimeout time.Duration
	BoostWorkers int
	MaxWorkers   int
}

type WorkerPool struct {
	lock               sync.Mutex
	baseCtx            context.Context
	baseCtxCancel      context.CancelFunc
	qid                int64
	maxNumberOfWorkers int
	numberOfWorkers    int
	batchLength        int
	handle             HandlerFunc
	dataChan           chan Data
	blockTimeout       time.Duration
	boostTimeout       time.Duration
	boostWorkers       int
	numInQueue         int64
	wg                 sync.WaitGroup
}

func NewWorkerPool(handle HandlerFunc, config WorkerPoolConfiguration, workers int) *WorkerPool {
	ctx, cancel := context.WithCancel(context.Background())
	p := &WorkerPool{
		baseCtx:            ctx,
		baseCtxCancel:      cancel,
		maxNumberOfWorkers: config.MaxWorkers,
		batchLength:        config.BatchLength,
		handle:             handle,
		dataChan:           make(chan Data, config.QueueLength),
		blockTimeout:       config.BlockTimeout,
		boostTimeout:       config.BoostTimeout,
		boostWorkers:       config.BoostWorkers,
	}
	for i := 0; i < workers; i++ {
		p.lock.Lock()
		p.numberOfWorkers++
		p.lock.Unlock()
		p.startWorker(ctx)
	}
	return p
}

// Push pushes the data to the internal channel, boosting workers if it blocks.
func (p *WorkerPool) Push(data Data) {
	atomic.AddInt64(&p.numInQueue, 1)
	p.lock.Lock()
	boost := p.blockTimeout > 0 && p.boostTimeout > 0 &&
		(p.numberOfWorkers < p.maxNumberOfWorkers || p.maxNumberOfWorkers < 0)
	p.lock.Unlock()
	if boost {
		p.pushBoost(data)
		return
	}
	p.dataChan <- data
}

func (p *WorkerPool) pushBoost(data Data) {
	select {
	case p.dataChan <- data:
		return
	default:
	}
	p.lock.Lock()
	timer := time.NewTimer(p.blockTimeout)
	p.lock.Unlock()
	select {
	case p.dataChan <- data:
		timer.Stop()
		return
	case <-timer.C:
	}
	boostCtx, boostCtxCancel := context.WithTimeout(p.baseCtx, p.boostTimeout)
	p.addBoostWorkers(boostCtx, boostCtxCancel)
	p.dataChan <- data
}

func (p *WorkerPool) addBoostWorkers(ctx context.Context, cancel context.CancelFunc) {
	added := 0
	for i := 0; i < p.boostWorkers; i++ {
		p.lock.Lock()
		if p.maxNumberOfWorkers >= 0 && p.numberOfWorkers >= p.maxNumberOfWorkers {
			log.Printf("WorkerPool: %d max workers (%d) reached, boosted %d", p.qid, p.maxNumberOfWorkers, added)
			p.lock.Unlock()
			break
		}
		p.numberOfWorkers++
		p.blockTimeout *= 2
		p.lock.Unlock()
		p.startWorker(ctx)
		added++
	}
	if added == 0 {
		cancel()
		return
	}
	go func() {
		<-ctx.Done()
		cancel()
	}()
}

func (p *WorkerPool) startWorker(ctx context.Context) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.doWork(ctx)
	}()
}

func (p *WorkerPool) doWork(ctx context.Context) {
	defer func() {
		p.lock.Lock()
		p.numberOfWorkers--
		p.lock.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case data := <-p.dataChan:
			atomic.AddInt64(&p.numInQueue, -1)
			p.handle(data)
		}
	}
}

// NumberOfWorkers returns the number of current workers in the pool.
func (p *WorkerPool) NumberOfWorkers() int {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.numberOfWorkers
}

func (p *WorkerPool) Shutdown() {
	p.baseCtxCancel()
	p.wg.Wait()
}

func TestBoostStopsAtMaxWorkers(t *testing.T) {
	release := make(chan struct{})
	handle := func(data ...Data) []Data { <-release; return nil }
	p := NewWorkerPool(handle, WorkerPoolConfiguration{
		QueueLength: 1, BlockTimeout: 10 * time.Millisecond, BoostTimeout: 5 * time.Second,
		BoostWorkers: 5, MaxWorkers: 2,
	}, 1)

	pushed := make(chan struct{})
	go func() { // indexer pushing repositories
		defer close(pushed)
		for i := 0; i < 3; i++ {
			p.Push(i)
		}
	}()
	<-pushed

	workers := make(chan int)
	go func() { workers <- p.NumberOfWorkers() }() // admin monitor page
	if n := <-workers; n != 2 {
		t.Fatalf("NumberOfWorkers = %d, want 2", n)
	}
	close(release)
	p.Shutdown()
}
