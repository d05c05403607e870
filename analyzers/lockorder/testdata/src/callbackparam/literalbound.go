package callbackparam

import (
	"errors"
	"sync"
)

// A helper runs the check it is given under its own lock, after an early
// return on a closed buffer; the caller's literal combines two checks
// with &&, the second a closure that locks the transport when there is
// quota. The literal's && is the caller's own code, which records its
// edges on any branch: it does not count against the bound of
// conditional steps (grpc-go's checkForStreamQuota under controlBuf.mu,
// against handleGoAway's transport lock held across the buffer's put).
type ctrlBuf struct {
	mu     sync.Mutex
	closed error
	items  []int
}

func (c *ctrlBuf) executeAndPut(check func(int) bool, it int) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed != nil {
		return false, c.closed
	}
	if check != nil && !check(it) {
		return false, nil
	}
	c.items = append(c.items, it)
	return true, nil
}

type transport struct {
	mu      sync.Mutex
	quota   int
	active  map[int]bool
	ctrl    *ctrlBuf
	goingUp bool
}

func (t *transport) NewStream(id int) error {
	withQuota := func(it int) bool {
		if t.quota <= 0 {
			return false
		}
		t.quota--
		t.mu.Lock()
		t.active[it] = true
		t.mu.Unlock()
		return true
	}
	sized := func(it int) bool { return it > 0 }
	ok, err := t.ctrl.executeAndPut(func(it int) bool { return sized(it) && withQuota(it) }, id)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("no quota")
	}
	return nil
}

func (t *transport) GoAway() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.goingUp = false
	t.ctrl.executeAndPut(nil, -1) // want `lock order inversion: ctrlBuf.mu then transport.mu in ctrlBuf.executeAndPut \(literalbound.go:\d+ -> literalbound.go:\d+ via transport.NewStream.func3 -> transport.NewStream.func1, passed at literalbound.go:\d+\) but transport.mu then ctrlBuf.mu in transport.GoAway \(literalbound.go:\d+ -> literalbound.go:\d+ via ctrlBuf.executeAndPut\) \[lock-order\]`
}

// The fixed transport registers the stream after the buffer let its lock
// go. Silent.
type fixedTransport struct {
	mu     sync.Mutex
	quota  int
	active map[int]bool
	ctrl   *ctrlBuf
}

func (t *fixedTransport) NewStream(id int) error {
	withQuota := func(it int) bool {
		if t.quota <= 0 {
			return false
		}
		t.quota--
		return true
	}
	sized := func(it int) bool { return it > 0 }
	ok, err := t.ctrl.executeAndPut(func(it int) bool { return sized(it) && withQuota(it) }, id)
	if err != nil || !ok {
		return err
	}
	t.mu.Lock()
	t.active[id] = true
	t.mu.Unlock()
	return nil
}

func (t *fixedTransport) GoAway() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ctrl.executeAndPut(nil, -1)
}
