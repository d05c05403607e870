// Like database/sql connection pool: Get locks the pool, pops an idle conn,
// unlocks, then locks the conn; Put locks the conn, unlocks, then locks the
// pool. The pool and conn mutexes are never held at the same time.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/connpool/pool"
)

func main() {
	p := &pool.Pool{}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				c, err := p.Get()
				if err != nil {
					return
				}
				c.Exec(i%37 == w)
				p.Put(c)
			}
		}(w)
	}
	wg.Wait()
	fmt.Println("closed idle conns:", p.Close())
}
