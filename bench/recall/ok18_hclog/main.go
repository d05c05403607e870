// Package main models hashicorp/go-hclog's intLogger (intlogger.go): the
// logger serialises writes with its own mutex and formats the message with
// fmt.Sprintf(msg, args...) while holding it. Callers pass values implementing
// fmt.Stringer (peer IDs, durations, atomic gauges). None of those String
// methods take a lock: they read immutable fields or atomics only.
package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

type level int

const (
	levelDebug level = iota
	levelInfo
	levelWarn
)

func (l level) String() string { return [...]string{"DEBUG", "INFO", "WARN"}[l] }

type intLogger struct {
	mu     sync.Mutex
	name   string
	out    *bytes.Buffer
	lines  int
	minLvl level
}

func newLogger(name string) *intLogger {
	return &intLogger{name: name, out: new(bytes.Buffer), minLvl: levelDebug}
}

func (l *intLogger) log(lvl level, msg string, v ...interface{}) {
	if lvl < l.minLvl {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	line := fmt.Sprintf(msg, v...) // may call String() on args
	fmt.Fprintf(l.out, "[%s] %s: %s\n", lvl, l.name, line)
	l.lines++
}

func (l *intLogger) Info(msg string, v ...interface{})  { l.log(levelInfo, msg, v...) }
func (l *intLogger) Debug(msg string, v ...interface{}) { l.log(levelDebug, msg, v...) }
func (l *intLogger) Warn(msg string, v ...interface{})  { l.log(levelWarn, msg, v...) }

func (l *intLogger) Lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}

// serverID is immutable after creation.
type serverID struct {
	addr string
	id   [4]byte
}

func (s serverID) String() string {
	return fmt.Sprintf("%s(%x)", s.addr, s.id[:])
}

// gauge is shared and mutated concurrently; String reads an atomic.
type gauge struct {
	name string
	val  atomic.Int64
}

func (g *gauge) String() string {
	return fmt.Sprintf("%s=%d", g.name, g.val.Load())
}

type raftPeer struct {
	id       serverID
	lastIdx  gauge
	inflight gauge
}

func main() {
	logger := newLogger("raft")
	peers := make([]*raftPeer, 3)
	for i := range peers {
		p := &raftPeer{id: serverID{addr: fmt.Sprintf("10.0.1.%d:8300", i+1), id: [4]byte{byte(i), 1, 2, 3}}}
		p.lastIdx.name = "last_index"
		p.inflight.name = "inflight"
		peers[i] = p
	}

	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Add(1)
		go func(p *raftPeer) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				p.inflight.val.Add(1)
				p.lastIdx.val.Store(int64(i))
				logger.Debug("appendEntries to %s: %s %s", p.id, &p.lastIdx, &p.inflight)
				p.inflight.val.Add(-1)
			}
			logger.Info("replication caught up: peer=%v", p.id)
		}(p)
	}
	// heartbeat goroutine logs about all peers concurrently
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			p := peers[i%len(peers)]
			logger.Warn("heartbeat slow: peer=%s %v lvl=%s", p.id, &p.inflight, levelWarn)
		}
	}()
	wg.Wait()

	logger.mu.Lock()
	out := logger.out.String()
	logger.mu.Unlock()
	fmt.Println("lines logged:", logger.Lines(), "catch-ups:", strings.Count(out, "caught up"))
	if logger.Lines() != 3*100+3+50 {
		panic("lost log lines")
	}
}
