// Modelled on etcd's raft package (raft/logger.go, tracker/progress.go): a
// package-level Logger interface variable is used while the node mutex is
// held to log a Progress value, whose String method reads only its own fields.

package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
)

type Logger interface {
	Printf(format string, v ...any)
	Println(v ...any)
}

var raftLogger Logger = log.New(os.Stderr, "raft ", log.LstdFlags)

func SetLogger(l Logger) { raftLogger = l }

type progressState uint8

const (
	stateProbe progressState = iota
	stateReplicate
	stateSnapshot
)

var stateNames = [...]string{"StateProbe", "StateReplicate", "StateSnapshot"}

// Progress is a plain value; String takes no lock.
type Progress struct {
	Match, Next uint64
	State       progressState
	Paused      bool
}

func (p Progress) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s match=%d next=%d", stateNames[p.State], p.Match, p.Next)
	if p.Paused {
		b.WriteString(" paused")
	}
	return b.String()
}

type raftNode struct {
	mu       sync.Mutex
	id       uint64
	lastIdx  uint64
	progress map[uint64]*Progress
}

func newRaftNode(id uint64, peers []uint64) *raftNode {
	r := &raftNode{id: id, progress: make(map[uint64]*Progress)}
	for _, p := range peers {
		r.progress[p] = &Progress{Next: 1}
	}
	return r
}

func (r *raftNode) Propose(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastIdx += uint64(n)
	raftLogger.Printf("%x appended %d entries, last index %d", r.id, n, r.lastIdx)
}

func (r *raftNode) HandleAppendResp(from, index uint64, reject bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pr, ok := r.progress[from]
	if !ok {
		return
	}
	if reject {
		if pr.Next > 1 {
			pr.Next--
		}
		pr.State = stateProbe
		raftLogger.Printf("%x received rejection from %x, progress %v", r.id, from, *pr)
		return
	}
	if index > pr.Match && index <= r.lastIdx {
		pr.Match = index
		pr.Next = index + 1
		if pr.State == stateProbe {
			pr.State = stateReplicate
			raftLogger.Println("became replicate:", *pr)
		}
	}
	pr.Paused = pr.Next > r.lastIdx+1
}

func (r *raftNode) Status() map[uint64]Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[uint64]Progress, len(r.progress))
	for id, pr := range r.progress {
		out[id] = *pr
	}
	return out
}

func main() {
	if os.Getenv("RAFT_VERBOSE") == "" {
		SetLogger(log.New(io.Discard, "raft ", 0))
	}
	peers := []uint64{2, 3, 4}
	r := newRaftNode(1, peers)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 100; i++ {
			r.Propose(1 + i%3)
		}
	}()
	for _, p := range peers {
		wg.Add(1)
		go func(p uint64) {
			defer wg.Done()
			for i := uint64(1); i <= 150; i++ {
				r.HandleAppendResp(p, i, i%17 == 0)
			}
		}(p)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			for id, pr := range r.Status() {
				_ = fmt.Sprintf("%x: %v", id, pr)
			}
		}
	}()
	wg.Wait()

	for _, p := range peers {
		fmt.Printf("peer %d: %v\n", p, r.Status()[p])
	}
}
