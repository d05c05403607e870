// Project: containerd (runtime/v1/shim/reaper, sys/reaper)
// Bug: Monitor.notify holds the monitor lock while sending each exit on every
// subscriber channel; a subscriber that already got its own exit stops reading
// and calls Unsubscribe (needs the same lock) once its buffer is full.
// Fix: snapshot subscribers under the lock, send without it using a per-subscriber
// lock, a closed flag and a send timeout.
package b26containerdreaper_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

var ErrNoSuchProcess = errors.New("no such process")

const bufferSize = 32

type Exit struct {
	Timestamp time.Time
	Pid       int
	Status    int
}

type Cmd struct {
	Pid      int
	ioCopied chan struct{}
}

func (c *Cmd) Start() error { return nil }
func (c *Cmd) Wait() error  { <-c.ioCopied; return nil }

type subscriber struct {
	sync.Mutex
	c      chan Exit
	closed bool
}

func (s *subscriber) close() {
	s.Lock()
	if s.closed {
		s.Unlock()
		return
	}
	close(s.c)
	s.closed = true
	s.Unlock()
}

type Monitor struct {
	sync.Mutex
	subscribers map[chan Exit]*subscriber
}

var Default = &Monitor{subscribers: make(map[chan Exit]*subscriber)}

func (m *Monitor) Start(c *Cmd) (chan Exit, error) {
	ec := m.Subscribe()
	if err := c.Start(); err != nil {
		m.Unsubscribe(ec)
		return nil, err
	}
	return ec, nil
}

func (m *Monitor) Wait(c *Cmd, ec chan Exit) (int, error) {
	for e := range ec {
		if e.Pid == c.Pid {
			c.Wait()
			m.Unsubscribe(ec)
			return e.Status, nil
		}
	}
	return -1, ErrNoSuchProcess
}

func (m *Monitor) Subscribe() chan Exit {
	c := make(chan Exit, bufferSize)
	m.Lock()
	m.subscribers[c] = &subscriber{c: c}
	m.Unlock()
	return c
}

func (m *Monitor) Unsubscribe(c chan Exit) {
	m.Lock()
	s, ok := m.subscribers[c]
	if !ok {
		m.Unlock()
		return
	}
	s.close()
	delete(m.subscribers, c)
	m.Unlock()
}

func (m *Monitor) getSubscribers() map[chan Exit]*subscriber {
	out := make(map[chan Exit]*subscriber)
	m.Lock()
	for k, v := range m.subscribers {
		out[k] = v
	}
	m.Unlock()
	return out
}

func (m *Monitor) notify(e Exit) {
	const timeout = 10 * time.Millisecond
	for _, s := range m.getSubscribers() {
		s.Lock()
		if !s.closed {
			timer := time.NewTimer(timeout)
			select {
			case s.c <- e:
			case <-timer.C:
			}
			timer.Stop()
		}
		s.Unlock()
	}
}

// Reap is called from the shim's SIGCHLD handler with the reaped exits.
func Reap(exits []Exit) {
	now := time.Now()
	for _, e := range exits {
		e.Timestamp = now
		Default.notify(e)
	}
}

func TestProbe(t *testing.T) {
	// Long-lived consumer: the shim's processExits loop.
	shimEc := Default.Subscribe()
	go func() {
		for range shimEc {
		}
	}()

	// runc exec helper whose exit the task service waits on.
	cmd := &Cmd{Pid: 4242, ioCopied: make(chan struct{})}
	ec, err := Default.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	result := make(chan int, 1)
	go func() {
		status, err := Default.Wait(cmd, ec)
		if err != nil {
			status = -1
		}
		result <- status
	}()

	// A burst of exits: the helper first, then many exec'd processes.
	exits := []Exit{{Pid: 4242, Status: 0}}
	for pid := 5000; pid < 5000+2*bufferSize; pid++ {
		exits = append(exits, Exit{Pid: pid, Status: 137})
	}
	reaped := make(chan struct{})
	go func() {
		Reap(exits)
		close(reaped)
	}()
	time.Sleep(50 * time.Millisecond) // stdio copy of the helper drains
	close(cmd.ioCopied)

	if status := <-result; status != 0 {
		t.Fatalf("unexpected exit status %d", status)
	}
	<-reaped
	Default.Unsubscribe(shimEc)
}
