// Pattern: grafana/loki pkg/ingester recovery: the ingester replays its WAL
// with a fixed number of concurrent shard workers; each worker records its
// recovered stream count under the ingester lock and reports readiness on
// a channel sized to the shard count. Every shard reports exactly once in
// the lifetime of the process, so the channel can never hold more than its
// capacity and the send under the lock never blocks.
package main

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

const numShards = 8

type shardReady struct {
	shard   int
	streams int
	took    time.Duration
}

type Ingester struct {
	mu        sync.Mutex
	recovered map[int]int // shard -> streams
	ready     map[int]bool
	readyCh   chan shardReady
}

func NewIngester() *Ingester {
	return &Ingester{
		recovered: make(map[int]int),
		ready:     make(map[int]bool),
		readyCh:   make(chan shardReady, numShards),
	}
}

func (i *Ingester) replayShard(shard int) {
	start := time.Now()
	streams := 0
	segments := 5 + rand.IntN(10)
	for seg := 0; seg < segments; seg++ {
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		streams += 10 + rand.IntN(40)
	}

	i.mu.Lock()
	defer i.mu.Unlock()
	i.recovered[shard] = streams
	i.readyCh <- shardReady{shard: shard, streams: streams, took: time.Since(start)}
}

func (i *Ingester) Recover() {
	var wg sync.WaitGroup
	for s := 0; s < numShards; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i.replayShard(s)
		}()
	}
	wg.Wait()
	close(i.readyCh)
}

func (i *Ingester) watchReadiness(done chan<- int) {
	total := 0
	for r := range i.readyCh {
		i.mu.Lock()
		i.ready[r.shard] = true
		nReady := len(i.ready)
		total += i.recovered[r.shard]
		i.mu.Unlock()
		fmt.Printf("shard %d ready (%d streams, %v), %d/%d\n",
			r.shard, r.streams, r.took.Round(time.Millisecond), nReady, numShards)
	}
	done <- total
}

func main() {
	ing := NewIngester()
	done := make(chan int, 1)
	go ing.watchReadiness(done)
	ing.Recover()
	fmt.Println("recovered streams:", <-done)
}
