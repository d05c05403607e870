// Like allegro/bigcache sharded cache: lock striping by key hash; Get,
// Set and Rename (which may touch two stripes, sequentially) and Stats
// (which visits all stripes in a loop) only ever hold a single stripe.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/bigcache/shard"
)

func main() {
	c := shard.New(8)
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				key := fmt.Sprintf("user:%d", (i*7+w)%64)
				switch i % 4 {
				case 0:
					c.Set(key, []byte(key))
				case 1:
					c.Get(key)
				case 2:
					c.Rename(key, fmt.Sprintf("user:%d", (i+w)%64))
				default:
					c.Stats()
				}
			}
		}(w)
	}
	wg.Wait()
	items, hits, misses := c.Stats()
	fmt.Println("items:", items, "hits:", hits, "misses:", misses)
}
