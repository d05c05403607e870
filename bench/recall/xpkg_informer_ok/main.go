// informer_ok: modeled on kubernetes client-go shared informers, where a
// controller registers a ResourceEventHandler. Correct: Informer copies its
// handler slice under Informer.mu and calls OnAdd/OnDelete after unlocking, so
// the controller holding controller.mu while calling Informer.Len
// (controller.mu -> Informer.mu) has no reverse edge to close a cycle.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/xpkg_informer_ok/cache"
)

type controller struct {
	mu       sync.Mutex
	informer *cache.Informer
	queue    []string
}

func (c *controller) OnAdd(key string) {
	c.mu.Lock()
	c.queue = append(c.queue, "add:"+key)
	c.mu.Unlock()
}

func (c *controller) OnDelete(key string) {
	c.mu.Lock()
	c.queue = append(c.queue, "del:"+key)
	c.mu.Unlock()
}

func (c *controller) synced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.informer.Len() >= len(c.queue)/2
}

func main() {
	c := &controller{informer: cache.NewInformer()}
	c.informer.AddEventHandler(c)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(2)
		key := fmt.Sprintf("pod-%d", i)
		go func() { defer wg.Done(); c.informer.Add(key); c.informer.Delete(key) }()
		go func() { defer wg.Done(); _ = c.synced() }()
	}
	wg.Wait()
	fmt.Println("events:", len(c.queue))
}
