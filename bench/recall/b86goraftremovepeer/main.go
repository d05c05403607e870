// Project: etcd v0.3/v0.4 (its Raft library goraft/raft, vendored as third_party/github.com/goraft/raft: log.go setCommitIndex, commands.go DefaultLeaveCommand, server.go RemovePeer, peer.go heartbeat/flush), March 2014 (approximate).
// Bug: the leader applies committed entries in Log.setCommitIndex with the log
// write lock held, and applying a leave command calls server.RemovePeer, which
// stops the removed peer's heartbeat with a blocking send on its stopChan. A
// heartbeat that has meanwhile started a flush is blocked in
// log.getEntriesAfter on the log read lock, so the event loop and the heartbeat
// wait on each other and nothing more is committed (goraft PR #195,
// approximate; the fix stops the heartbeat from a new goroutine because "we are
// holding log write lock when reach this line of code").
package main

import (
	"fmt"
	"sync"
	"time"
)

const Leader = "leader"

type Command interface {
	CommandName() string
	Apply(s *server) (interface{}, error)
}

// DefaultLeaveCommand is the command a server uses to leave the cluster.
type DefaultLeaveCommand struct{ Name string }

func (c *DefaultLeaveCommand) CommandName() string { return "raft:leave" }

func (c *DefaultLeaveCommand) Apply(s *server) (interface{}, error) {
	return nil, s.RemovePeer(c.Name)
}

type setCommand struct{ Key, Value string }

func (c *setCommand) CommandName() string                  { return "etcd:set" }
func (c *setCommand) Apply(s *server) (interface{}, error) { return c.Value, nil }

type LogEntry struct {
	Index, Term uint64
	Command     Command
}

type Log struct {
	mutex       sync.RWMutex
	entries     []*LogEntry
	commitIndex uint64
	ApplyFunc   func(*LogEntry, Command) (interface{}, error)
}

func (l *Log) getEntriesAfter(index uint64) ([]*LogEntry, uint64) {
	l.mutex.RLock()
	defer l.mutex.RUnlock()
	if index >= uint64(len(l.entries)) {
		return nil, 0
	}
	return l.entries[index:], l.entries[index].Term
}

// Updates the commit index and writes entries after that index to the stable storage.
func (l *Log) setCommitIndex(index uint64) error {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	for i := l.commitIndex + 1; i <= index; i++ {
		entry := l.entries[i-1]
		time.Sleep(4 * time.Millisecond) // encode the entry to the log file and sync
		l.commitIndex = entry.Index
		if _, err := l.ApplyFunc(entry, entry.Command); err != nil {
			return err
		}
	}
	return nil
}

type AppendEntriesResponse struct {
	Term, Index uint64
	Success     bool
	peer        string
}

type ev struct {
	target interface{}
	c      chan error
}

type server struct {
	name         string
	mutex        sync.RWMutex
	state        string
	peers        map[string]*Peer
	log          *Log
	c            chan *ev
	routineGroup sync.WaitGroup
}

func (s *server) State() string { s.mutex.RLock(); defer s.mutex.RUnlock(); return s.state }

func (s *server) send(value interface{}) error {
	e := &ev{target: value, c: make(chan error, 1)}
	s.c <- e
	return <-e.c
}

// Removes a peer from the server.
func (s *server) RemovePeer(name string) error {
	if name != s.name {
		peer := s.peers[name]
		if peer == nil {
			return fmt.Errorf("raft: Peer not found: %s", name)
		}
		// Stop peer and remove it.
		if s.State() == Leader {
			peer.stopHeartbeat(true)
		}
		delete(s.peers, name)
	}
	return nil
}

func (s *server) leaderLoop() {
	for _, peer := range s.peers {
		peer.startHeartbeat()
	}
	for e := range s.c {
		if resp, ok := e.target.(*AppendEntriesResponse); ok && resp.Success {
			// a quorum has the entries: commit and apply them
			s.log.setCommitIndex(resp.Index)
		}
		e.c <- nil
	}
}

type Peer struct {
	server            *server
	Name              string
	prevLogIndex      uint64
	stopChan          chan bool
	heartbeatInterval time.Duration
}

func (p *Peer) startHeartbeat() {
	p.stopChan = make(chan bool)
	c := make(chan bool)
	go p.heartbeat(c)
	<-c
}

func (p *Peer) stopHeartbeat(flush bool) {
	p.stopChan <- flush
}

func (p *Peer) heartbeat(c chan bool) {
	stopChan := p.stopChan
	c <- true
	ticker := time.Tick(p.heartbeatInterval)
	for {
		select {
		case flush := <-stopChan:
			if flush {
				// before we can safely remove a node
				// we must flush the remove command to the node first
				p.flush()
			}
			return
		case <-ticker:
			p.flush()
		}
	}
}

type AppendEntriesRequest struct {
	PrevLogIndex, PrevLogTerm uint64
	Entries                   []*LogEntry
}

func (p *Peer) flush() {
	entries, prevLogTerm := p.server.log.getEntriesAfter(p.prevLogIndex)
	p.sendAppendEntriesRequest(&AppendEntriesRequest{PrevLogIndex: p.prevLogIndex, PrevLogTerm: prevLogTerm, Entries: entries})
}

func (p *Peer) sendAppendEntriesRequest(req *AppendEntriesRequest) {
	// The HTTP transporter delivers the request and the follower accepts it.
	if n := len(req.Entries); n > 0 {
		p.prevLogIndex = req.Entries[n-1].Index
	}
}

func main() {
	s := &server{name: "node1", state: Leader, peers: map[string]*Peer{}, c: make(chan *ev)}
	s.log = &Log{entries: []*LogEntry{
		{Index: 1, Term: 2, Command: &setCommand{"/foo", "bar"}},
		{Index: 2, Term: 2, Command: &setCommand{"/foo", "baz"}},
		{Index: 3, Term: 2, Command: &DefaultLeaveCommand{Name: "node3"}}, // etcdctl member remove node3
	}}
	s.log.ApplyFunc = func(e *LogEntry, c Command) (interface{}, error) { return c.Apply(s) }
	for _, name := range []string{"node2", "node3"} {
		s.peers[name] = &Peer{server: s, Name: name, heartbeatInterval: 10 * time.Millisecond}
	}
	go s.leaderLoop()
	time.Sleep(15 * time.Millisecond)

	// node2 acknowledges entries 1-3, which makes them committed.
	err := s.send(&AppendEntriesResponse{Term: 2, Index: 3, Success: true, peer: "node2"})
	fmt.Println("committed up to", s.log.commitIndex, "err", err, "peers left", len(s.peers))
}
