// Project: gitea (modules/queue/workerpool.go)
// Bug: Push on a pool with zero running workers took p.lock, "zero boosted" new workers and then
// handed the item over on the unbuffered dataChan while still holding p.lock. Each boosted worker
// registers itself under p.lock before it starts receiving, so nobody can ever receive: the pusher
// blocks on the send holding the lock (e.g. a "channel" queue with length 0 on a fresh instance).
// Upstream fix (applied here): zeroBoost releases p.lock before the pool blocks on dataChan; modelled, PR number not recalled.
package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type Data any

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

func NewWorkerPool(handle HandlerFunc, config WorkerPoolConfiguration) *WorkerPool {
	ctx, cancel := context.WithCancel(context.Background())
	return &WorkerPool{
		baseCtx:            ctx,
		baseCtxCancel:      cancel,
		batchLength:        config.BatchLength,
		dataChan:           make(chan Data, config.QueueLength),
		handle:             handle,
		blockTimeout:       config.BlockTimeout,
		boostTimeout:       config.BoostTimeout,
		boostWorkers:       config.BoostWorkers,
		maxNumberOfWorkers: config.MaxWorkers,
	}
}

// Push pushes the data to the internal channel
func (p *WorkerPool) Push(data Data) {
	atomic.AddInt64(&p.numInQueue, 1)
	p.lock.Lock()
	if p.blockTimeout > 0 && p.boostTimeout > 0 && (p.numberOfWorkers <= p.maxNumberOfWorkers || p.maxNumberOfWorkers < 0) {
		if p.numberOfWorkers == 0 {
			p.zeroBoost()
			p.lock.Unlock()
			p.dataChan <- data
			return
		}
		p.lock.Unlock()
		p.dataChan <- data
		return
	}
	p.lock.Unlock()
	p.dataChan <- data
}

func (p *WorkerPool) zeroBoost() {
	ctx, cancel := context.WithTimeout(p.baseCtx, p.boostTimeout)
	boost := p.boostWorkers
	if (boost+p.numberOfWorkers) > p.maxNumberOfWorkers && p.maxNumberOfWorkers >= 0 {
		boost = p.maxNumberOfWorkers - p.numberOfWorkers
	}
	fmt.Printf("WorkerPool: %d has zero workers - adding %d temporary workers for %s\n", 0, boost, p.boostTimeout)
	p.addWorkers(ctx, cancel, boost)
}

func (p *WorkerPool) addWorkers(ctx context.Context, cancel context.CancelFunc, number int) {
	for i := 0; i < number; i++ {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.lock.Lock()
			p.numberOfWorkers++
			p.lock.Unlock()
			p.doWork(ctx)
			p.lock.Lock()
			p.numberOfWorkers--
			if p.numberOfWorkers == 0 {
				cancel()
			}
			p.lock.Unlock()
		}()
	}
}

func (p *WorkerPool) doWork(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case datum := <-p.dataChan:
			p.handle(datum)
			atomic.AddInt64(&p.numInQueue, -1)
		}
	}
}

func main() {
	var handled int64
	pool := NewWorkerPool(func(data ...Data) []Data {
		atomic.AddInt64(&handled, int64(len(data)))
		return nil
	}, WorkerPoolConfiguration{
		QueueLength:  0, // [queue.webhook] TYPE=channel LENGTH=0
		BatchLength:  1,
		BlockTimeout: time.Second,
		BoostTimeout: 50 * time.Millisecond,
		BoostWorkers: 1,
		MaxWorkers:   10,
	})

	for _, hookTaskID := range []int64{101, 102, 103} {
		pool.Push(hookTaskID)
	}
	pool.wg.Wait()
	fmt.Println("webhook tasks delivered:", atomic.LoadInt64(&handled))
}
