package main

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// Gateway accepts connections from several Serve loops. acceptMu makes the
// accept step exclusive (so the accepted counter and rate decision stay
// consistent); Close never takes acceptMu, only stateMu.
type Gateway struct {
	ln       net.Listener // set once in NewGateway, never reassigned
	acceptMu sync.Mutex
	accepted int

	stateMu sync.Mutex
	closing bool
	active  sync.WaitGroup
}

func NewGateway(ln net.Listener) *Gateway { return &Gateway{ln: ln} }

func (g *Gateway) acceptOne() (net.Conn, int, error) {
	g.acceptMu.Lock()
	defer g.acceptMu.Unlock()
	c, err := g.ln.Accept() // blocks while holding acceptMu
	if err != nil {
		return nil, 0, err
	}
	g.accepted++
	return c, g.accepted, nil
}

func (g *Gateway) Serve() {
	for {
		c, n, err := g.acceptOne()
		if err != nil {
			return
		}
		g.stateMu.Lock()
		if g.closing {
			g.stateMu.Unlock()
			c.Close()
			return
		}
		g.active.Add(1)
		g.stateMu.Unlock()
		go func() {
			defer g.active.Done()
			defer c.Close()
			fmt.Fprintf(c, "conn #%d\n", n)
		}()
	}
}

// Close unblocks Accept by closing the listener; it does not need acceptMu.
func (g *Gateway) Close() {
	g.stateMu.Lock()
	if g.closing {
		g.stateMu.Unlock()
		return
	}
	g.closing = true
	g.ln.Close()
	g.stateMu.Unlock()
	g.active.Wait()
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return
	}
	g := NewGateway(ln)
	var loops sync.WaitGroup
	for i := 0; i < 2; i++ {
		loops.Add(1)
		go func() {
			defer loops.Done()
			g.Serve()
		}()
	}
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			fmt.Println("dial:", err)
			break
		}
		b, _ := io.ReadAll(c)
		fmt.Print(string(b))
		c.Close()
	}
	g.Close()
	loops.Wait()
	fmt.Println("gateway closed")
}
