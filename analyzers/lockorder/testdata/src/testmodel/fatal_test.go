package testmodel

import (
	"runtime"
	"sync"
	"testing"
)

// t.Fatalf runs the test's deferred calls before its goroutine ends: a
// deferred Close that locks what the test still holds blocks there, and
// the test hangs instead of failing (grpc-go's keepalive test reading
// the client's parameters under cc.mu with `defer cc.Close()` pending).
// So does a test's own helper interface whose one implementation calls
// runtime.Goexit.

type keepaliveConn struct {
	mu   sync.RWMutex
	time int
}

func (c *keepaliveConn) Close() {
	c.mu.Lock()
	c.time = 0
	c.mu.Unlock()
}

func TestKeepaliveParams(t *testing.T) {
	c := &keepaliveConn{}
	defer c.Close()
	c.mu.RLock()
	if c.time != 20 {
		t.Fatalf("time = %d, want 20", c.time) // want `Fatalf ends the goroutine with keepaliveConn.mu read-locked \(since fatal_test.go:\d+\), and the deferred keepaliveConn.Close locks it again \(at fatal_test.go:\d+\): the goroutine blocks in its defers instead of ending \[double-lock\]`
	}
	c.mu.RUnlock()
}

// The fix: the lock let go before the check. Silent.
func TestKeepaliveParamsFixed(t *testing.T) {
	c := &keepaliveConn{}
	defer c.Close()
	c.mu.RLock()
	v := c.time
	c.mu.RUnlock()
	if v != 20 {
		t.Fatalf("time = %d, want 20", v)
	}
}

type fataler interface {
	Fatalf(format string, args ...any)
}

type goexitT struct{ msg string }

func (g *goexitT) Fatalf(format string, args ...any) {
	g.msg = format
	runtime.Goexit()
}

func checkKeepalive(t fataler) {
	c := &keepaliveConn{}
	defer c.Close()
	c.mu.Lock()
	if c.time != 20 {
		t.Fatalf("time = %d", c.time) // want `Fatalf ends the goroutine with keepaliveConn.mu held \(since fatal_test.go:\d+\), and the deferred keepaliveConn.Close locks it again \(at fatal_test.go:\d+\): the goroutine blocks in its defers instead of ending \[double-lock\]`
	}
	c.mu.Unlock()
}

// A Close deferred in a function whose lock is let go before the
// Fatalf. Silent.
func checkKeepaliveFixed(t fataler) {
	c := &keepaliveConn{}
	defer c.Close()
	c.mu.Lock()
	v := c.time
	c.mu.Unlock()
	if v != 20 {
		t.Fatalf("time = %d", v)
	}
}

func TestKeepaliveHelper(t *testing.T) {
	checkKeepalive(&goexitT{})
	checkKeepaliveFixed(&goexitT{})
}

// The unlock deferred after the Close runs first: the Close finds the
// lock free. Silent.
func TestKeepaliveDeferredUnlock(t *testing.T) {
	c := &keepaliveConn{}
	defer c.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.time != 20 {
		t.Fatalf("time = %d, want 20", c.time)
	}
}
