// grpc_bug: modeled on grpc-go's ClientConn / resolver wrapper: the resolver
// pushes addresses via resolver.ClientConn.UpdateState, and ClientConn.Close
// closes the resolver. The resolver holds only a read lock while calling out.
// DEADLOCK (AB-BA): resolver/resolver.go:38 calls ClientConn.UpdateState
// while holding Manual.mu.RLock, and clientConn.UpdateState takes cc.mu; meanwhile
// main.go:37 calls Manual.Close (takes Manual.mu.Lock) while holding cc.mu.
// The pending writer cannot get past the active reader, so both goroutines block.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/xpkg_grpc_bug/resolver"
)

type clientConn struct {
	mu     sync.Mutex
	res    *resolver.Manual
	addrs  []string
	closed bool
}

// UpdateState implements resolver.ClientConn.
func (cc *clientConn) UpdateState(addrs []string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !cc.closed {
		cc.addrs = addrs
	}
}

func (cc *clientConn) Close() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.closed = true
	cc.res.Close()
}

func main() {
	cc := &clientConn{}
	cc.res = &resolver.Manual{Target: "dns:///backend:443", CC: cc}
	cc.res.SetAddrs([]string{"10.0.0.1:443", "10.0.0.2:443"})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			cc.res.ResolveNow()
		}
	}()
	go func() { defer wg.Done(); cc.Close() }()
	wg.Wait()
	fmt.Println("addrs:", cc.addrs)
}
