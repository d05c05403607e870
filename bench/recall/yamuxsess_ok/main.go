// Like hashicorp yamux session: streams lock themselves and call session
// methods only after unlocking; the session locks its map, copies the
// streams, unlocks, then closes each stream.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/yamuxsess_ok/mux"
)

func main() {
	sess := mux.NewSession()
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				st := sess.OpenStream()
				st.Write(j)
				if j%3 == 0 {
					st.Close()
				}
			}
		}(i)
	}
	// Concurrent Close races with stream Close; both orders are safe.
	wg.Add(1)
	go func() {
		defer wg.Done()
		sess.Close()
	}()
	wg.Wait()
	fmt.Println("closed streams:", sess.Close())
}
