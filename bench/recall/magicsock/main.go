// Like tailscale magicsock: `unlock := c.lockAll(); defer unlock()` plus a
// struct embedding sync.Mutex whose field struct embeds its own sync.Mutex,
// always locked outer-then-inner.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/magicsock/magic"
)

func main() {
	c := magic.New()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(3)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				c.SetPeer(fmt.Sprintf("peer-%d-%d", i, j%10), j%5)
			}
		}(i)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				c.SetDERPHome((i + j) % 5)
			}
		}(i)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				c.RelayPacket(j % 5)
			}
		}()
	}
	wg.Wait()
	peers, relayed := c.Close()
	fmt.Println("peers:", peers, "relayed:", relayed)
}
