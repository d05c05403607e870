// Project: nats.go (NATS Go client), slow-consumer handling in Conn.processMsg.
// Bug: approximate (early client, before the dedicated async-callback dispatcher existed): on a
// slow consumer the readLoop invoked the user's stored AsyncErrorCB synchronously while still
// holding nc.mu; an error handler that inspects the connection (nc.Status(), nc.ConnectedUrl())
// re-locks nc.mu and the readLoop blocks on itself.
// Fix: capture the callback under nc.mu and invoke it only after nc.mu has been released.
package natscallback

import (
	"errors"
	"sync"
	"testing"
)

var ErrSlowConsumer = errors.New("nats: slow consumer, messages dropped")

type Status int

const (
	DISCONNECTED Status = iota
	CONNECTED
	CLOSED
)

type ErrHandler func(*Conn, *Subscription, error)

type Options struct {
	Url          string
	AsyncErrorCB ErrHandler
}

type Msg struct {
	Subject string
	Data    []byte
	Sub     *Subscription
}

type Subscription struct {
	mu         sync.Mutex
	sid        int64
	Subject    string
	mch        chan *Msg
	pMsgs      int
	pMsgsLimit int
	sc         bool
	dropped    int
}

type Conn struct {
	mu     sync.Mutex
	Opts   Options
	status Status
	url    string
	subs   map[int64]*Subscription
	err    error
	stats  struct{ InMsgs, InBytes uint64 }
}

func (nc *Conn) Status() Status {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return nc.status
}

func (nc *Conn) ConnectedUrl() string {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.status != CONNECTED {
		return ""
	}
	return nc.url
}

func (nc *Conn) subscribe(subj string, limit int) *Subscription {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	s := &Subscription{sid: int64(len(nc.subs) + 1), Subject: subj, pMsgsLimit: limit, mch: make(chan *Msg, limit)}
	nc.subs[s.sid] = s
	return s
}

// processMsg is called by the readLoop goroutine for each MSG protocol line.
func (nc *Conn) processMsg(subject string, sid int64, data []byte) {
	nc.mu.Lock()
	nc.stats.InMsgs++
	nc.stats.InBytes += uint64(len(data))
	sub := nc.subs[sid]
	if sub == nil {
		nc.mu.Unlock()
		return
	}
	sub.mu.Lock()
	sub.pMsgs++
	if sub.pMsgs > sub.pMsgsLimit {
		sub.pMsgs--
		sub.dropped++
		sub.mu.Unlock()
		nc.processSlowConsumer(sub)
		nc.mu.Unlock()
		return
	}
	sub.mch <- &Msg{Subject: subject, Data: data, Sub: sub}
	sub.sc = false
	sub.mu.Unlock()
	nc.mu.Unlock()
}

// processSlowConsumer is called with nc.mu held.
func (nc *Conn) processSlowConsumer(s *Subscription) {
	nc.err = ErrSlowConsumer
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sc && nc.Opts.AsyncErrorCB != nil {
		s.sc = true
		s.mu.Unlock()
		nc.Opts.AsyncErrorCB(nc, s, ErrSlowConsumer)
		s.mu.Lock()
	}
	s.sc = true
}

func (nc *Conn) readLoop(frames []string, sid int64) {
	for i, f := range frames {
		nc.processMsg(f, sid, []byte{byte(i)})
	}
}

func TestSlowConsumerCallbackDeadlock(t *testing.T) {
	nc := &Conn{status: CONNECTED, url: "nats://127.0.0.1:4222", subs: map[int64]*Subscription{}}
	nc.Opts.AsyncErrorCB = func(c *Conn, s *Subscription, err error) {
		t.Logf("async error on %q (status=%v, server=%s): %v", s.Subject, c.Status(), c.ConnectedUrl(), err)
	}
	sub := nc.subscribe("updates", 2)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		nc.readLoop([]string{"updates", "updates", "updates", "updates"}, sub.sid)
	}()
	wg.Wait()
}
