// Like etcd watchableStore / clientv3 watcher: ctx cancel closes a channel
// under the hub lock while readers select on it without the lock; Watch
// does a channel receive under the hub lock from a sender that never takes
// it (and that receive also selects on ctx.Done).
package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"example.com/recall/etcdwatch/watch"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	h := watch.NewHub(ctx)
	var received atomic.Int64
	var readers sync.WaitGroup
	for i := 0; i < 4; i++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			w, err := h.Watch()
			if err != nil {
				return
			}
			for {
				select {
				case ev := <-w.Ch:
					if ev.Rev > 0 {
						received.Add(1)
					}
				case <-h.Done():
					return
				}
			}
		}()
	}
	for rev := int64(1); rev <= 300; rev++ {
		h.Publish(fmt.Sprintf("/registry/pods/%d", rev%7), rev)
	}
	cancel()
	readers.Wait()
	fmt.Println("hub stopped; events received:", received.Load() >= 0)
}
