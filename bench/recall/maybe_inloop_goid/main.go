// Pattern: a method locks only when it is NOT running on the event-loop
// goroutine. The loop goroutine holds l.mu while it runs queued work, so
// calls made from inside that work must not (and do not) re-lock.
// Modelled on x/net/http2's serverConn, which identifies its serve goroutine
// by goroutine id (serveG.check()) parsed from runtime.Stack.
package main

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

func curGoroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("cannot parse goroutine id: " + err.Error())
	}
	return id
}

type Loop struct {
	mu    sync.Mutex
	state map[string]int // guarded by mu
	loopG atomic.Uint64  // id of the loop goroutine; 0 until it starts
	work  chan func()
}

func (l *Loop) inLoop() bool { return curGoroutineID() == l.loopG.Load() }

// Set may be called from anywhere. On the loop goroutine it is only ever
// reached from queued work, which runs with l.mu held by run().
func (l *Loop) Set(k string, v int) {
	if !l.inLoop() {
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	l.state[k] += v
}

func (l *Loop) Get(k string) int {
	if !l.inLoop() {
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	return l.state[k]
}

func (l *Loop) run(started, done chan<- struct{}) {
	defer close(done)
	l.loopG.Store(curGoroutineID())
	close(started)
	for fn := range l.work {
		l.mu.Lock()
		fn() // Set/Get inside fn see inLoop()==true and do not lock
		l.mu.Unlock()
	}
}

func main() {
	l := &Loop{state: map[string]int{}, work: make(chan func(), 16)}
	started, done := make(chan struct{}), make(chan struct{})
	go l.run(started, done)
	<-started

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if i%2 == 0 {
					l.Set("direct", 1) // not on loop: locks
				} else {
					l.work <- func() { // runs on loop under l.mu
						l.Set("queued", 1)
						if l.Get("queued") > 1000 {
							panic("impossible")
						}
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(l.work)
	<-done
	fmt.Println("direct:", l.Get("direct"), "queued:", l.Get("queued"))
}
