// hashicorp/yamux: Stream.Close held stateLock while calling
// session.closeStream (takes streamLock); Session.Close held streamLock and
// called forceClose on each stream (takes stateLock): AB-BA deadlock. FIXED TWIN: stateLock is released before calling closeStream.
package main

import (
	"sync"

	"example.com/recall/yamuxsess_fixed/session"
)

func main() {
	sess := session.New()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		st := sess.Open()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = st.Close() // local half-close
			_ = st.Close() // remote side done: fully closed
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); sess.Close() }()
	wg.Wait()
}
