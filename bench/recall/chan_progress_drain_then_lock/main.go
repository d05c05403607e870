// Pattern: moby/moby image pull progress. A layer download streams progress
// updates over a small buffered progress channel while holding the layer
// store lock (the store is being mutated chunk by chunk); the progress
// reader knows how many updates a pull produces, consumes all of them, and
// only then takes the store lock to read the committed layer list.
//
// Why it is safe: the reader never touches s.mu while updates are still
// owed to it. It receives exactly layers*chunksPerLayer values (the exact
// number the producer sends) before its first Lock, so a producer blocked
// on a full buffer with s.mu held is always unblocked by the reader.
package main

import (
	"fmt"
	"sync"
)

const (
	progressBuf    = 4
	chunksPerLayer = 10
	chunkSize      = 512
)

type progress struct {
	layer string
	chunk int
}

type layerStore struct {
	mu        sync.Mutex
	committed []string
	bytes     int
}

func (s *layerStore) pullLayer(id string, out chan<- progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < chunksPerLayer; i++ {
		s.bytes += chunkSize
		out <- progress{layer: id, chunk: i + 1} // may block; reader is lock-free until done
	}
	s.committed = append(s.committed, id)
}

func main() {
	layers := []string{"sha256:aa11", "sha256:bb22", "sha256:cc33"}
	store := &layerStore{}
	updates := make(chan progress, progressBuf)
	done := make(chan struct{})

	go func() {
		defer close(done)
		expected := len(layers) * chunksPerLayer
		last := map[string]int{}
		for i := 0; i < expected; i++ {
			p := <-updates
			last[p.layer] = p.chunk
			if p.chunk == chunksPerLayer {
				fmt.Printf("%s: download complete\n", p.layer)
			}
		}
		// Every update has been received; the puller can no longer block.
		store.mu.Lock()
		fmt.Printf("committed %d layers (%d bytes): %v\n", len(store.committed), store.bytes, store.committed)
		store.mu.Unlock()
	}()

	for _, id := range layers {
		store.pullLayer(id, updates)
	}
	<-done
}
