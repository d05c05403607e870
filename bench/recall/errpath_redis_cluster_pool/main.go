// Modelled on go-redis: per-node connection pools report bad connections and
// successful commands to a cluster-wide aggregate pool of the same type.
package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

var errBadConn = errors.New("redis: bad connection")

func isBadConn(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errBadConn) || errors.Is(err, io.EOF) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

type conn struct{ id int }

// connPool is used both for the per-node pools and the cluster root pool.
// Lock order is strictly child.mu -> parent.mu; a pool never locks its children.
type connPool struct {
	name    string
	parent  *connPool // nil for the cluster root
	mu      sync.Mutex
	idle    []*conn
	nextID  int
	hits    int
	removed int
}

func (p *connPool) Get() *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		cn := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return cn
	}
	p.nextID++
	return &conn{id: p.nextID}
}

// reportErr takes the PARENT pool's lock, and only on the error path.
func (p *connPool) reportErr(err error) {
	if err != nil {
		if p.parent == nil {
			return // the root has nobody to report to
		}
		p.parent.mu.Lock()
		if isBadConn(err) {
			p.parent.removed++
		}
		p.parent.mu.Unlock()
	}
}

// recordSuccess takes the PARENT pool's lock on the success side.
func (p *connPool) recordSuccess(err error) error {
	if err != nil {
		return err
	}
	if p.parent != nil {
		p.parent.mu.Lock()
		p.parent.hits++
		p.parent.mu.Unlock()
	}
	return nil
}

// Put returns cn to the pool. It holds p.mu while calling reportErr /
// recordSuccess, which lock p.parent.mu: a different instance, higher in the
// hierarchy, so this cannot self-deadlock or invert.
func (p *connPool) Put(cn *conn, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if isBadConn(err) {
		p.removed++
		p.reportErr(err)
		return
	}
	p.idle = append(p.idle, cn)
	_ = p.recordSuccess(err)
}

// Reset is called on the root only: it holds root.mu and calls reportErr on
// itself, which is a no-op because root.parent == nil.
func (p *connPool) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle = nil
	p.reportErr(errBadConn)
}

func (p *connPool) Stats() (hits, removed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits, p.removed
}

func main() {
	root := &connPool{name: "cluster"}
	nodes := make([]*connPool, 3)
	for i := range nodes {
		nodes[i] = &connPool{name: fmt.Sprintf("node%d", i), parent: root}
	}
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p := nodes[(g+i)%len(nodes)]
				cn := p.Get()
				var err error
				switch i % 7 {
				case 3:
					err = io.EOF
				case 5:
					err = fmt.Errorf("read: %w", errBadConn)
				}
				p.Put(cn, err)
				if i%50 == 0 {
					root.Stats()
				}
			}
		}(g)
	}
	wg.Wait()
	root.Reset()
	h, r := root.Stats()
	fmt.Printf("cluster hits=%d removed=%d total=%d\n", h, r, h+r)
}
