// nats_bug: modeled on nats-io/nats.go's DisconnectErrHandler, but with the
// callback invoked inline (not via the async callback dispatcher).
// DEADLOCK (AB-BA): nats/conn.go:46 calls Handler.Disconnected while holding
// Conn.mu, and publisher.Disconnected takes publisher.mu; meanwhile
// main.go:36 calls Conn.Publish (takes Conn.mu) while holding publisher.mu.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/xpkg_nats_bug/nats"
)

type publisher struct {
	mu     sync.Mutex
	conn   *nats.Conn
	online bool
	sent   int
}

// Disconnected implements nats.Handler.
func (p *publisher) Disconnected(url string) {
	p.mu.Lock()
	p.online = false
	p.mu.Unlock()
	fmt.Println("disconnected from", url)
}

func (p *publisher) send(subj string, msg []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.online {
		return
	}
	if err := p.conn.Publish(subj, msg); err == nil {
		p.sent++
	}
}

func main() {
	p := &publisher{online: true}
	p.conn = nats.Connect("nats://127.0.0.1:4222", p)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 100; i++ {
			p.send("orders.created", []byte(fmt.Sprint(i)))
		}
	}()
	p.conn.Close()
	wg.Wait()
	fmt.Println("sent", p.sent)
}
