// Project: etcd v0.3 (its Raft library goraft/raft, vendored as third_party/github.com/goraft/raft: server.go setCurrentTerm, peer.go heartbeat/flush/sendAppendEntriesRequest), February 2014.
// Bug: when a leader learns of a higher term, server.setCurrentTerm holds
// s.mutex while it stops every peer's heartbeat with a blocking send on the
// peer's unbuffered stopChan. A heartbeat goroutine already in flush calls
// p.server.Term() from sendAppendEntriesRequest, which read-locks s.mutex, so
// the server's event loop and the heartbeat wait on each other and the node
// never steps down (goraft PR #175 "Cleanup locks in peer", a cleaned-up #169:
// release s.mutex around the stopHeartbeat calls).
package main

import (
	"fmt"
	"sync"
	"time"
)

const (
	Follower = "follower"
	Leader   = "leader"
)

type LogEntry struct {
	Index, Term uint64
	CommandName string
}

type Log struct {
	mutex       sync.RWMutex
	entries     []*LogEntry
	commitIndex uint64
}

// getEntriesAfter returns the entries after the given index; it reads them
// back from the log file, which takes a moment for a large batch.
func (l *Log) getEntriesAfter(index uint64) ([]*LogEntry, uint64) {
	l.mutex.RLock()
	defer l.mutex.RUnlock()
	time.Sleep(5 * time.Millisecond)
	if index >= uint64(len(l.entries)) {
		return nil, 0
	}
	return l.entries[index:], l.entries[index].Term
}

func (l *Log) CommitIndex() uint64 { l.mutex.RLock(); defer l.mutex.RUnlock(); return l.commitIndex }

type AppendEntriesRequest struct {
	Term, PrevLogIndex, PrevLogTerm, CommitIndex uint64
	LeaderName                                   string
	Entries                                      []*LogEntry
}

type AppendEntriesResponse struct {
	Term    uint64
	Success bool
	peer    string
}

type RequestVoteRequest struct {
	Term          uint64
	CandidateName string
}

type ev struct {
	target      interface{}
	returnValue interface{}
	c           chan error
}

type server struct {
	name        string
	mutex       sync.RWMutex
	state       string
	currentTerm uint64
	leader      string
	votedFor    string
	peers       map[string]*Peer
	log         *Log
	c           chan *ev
}

func (s *server) Term() uint64 { s.mutex.RLock(); defer s.mutex.RUnlock(); return s.currentTerm }

func (s *server) State() string { s.mutex.RLock(); defer s.mutex.RUnlock(); return s.state }

func (s *server) send(value interface{}) (interface{}, error) {
	e := &ev{target: value, c: make(chan error, 1)}
	s.c <- e
	err := <-e.c
	return e.returnValue, err
}

func (s *server) sendAsync(value interface{}) {
	go s.send(value)
}

// Sets the current term for the server. This is only used when an external
// current term is found.
func (s *server) setCurrentTerm(term uint64, leaderName string, append bool) {
	s.mutex.Lock()
	defer s.mutex.Unlock()

	if term > s.currentTerm {
		// stop heartbeats before step-down
		if s.state == Leader {
			for _, peer := range s.peers {
				peer.stopHeartbeat(false)
			}
		}
		// update the term and clear vote for
		s.state = Follower
		s.currentTerm = term
		s.leader = leaderName
		s.votedFor = ""
	}
}

// The event loop that is run when the server is in a Leader state.
func (s *server) leaderLoop() {
	for _, peer := range s.peers {
		peer.startHeartbeat()
	}
	for s.State() == Leader {
		e := <-s.c
		switch req := e.target.(type) {
		case *RequestVoteRequest:
			if req.Term > s.Term() {
				s.setCurrentTerm(req.Term, "", false)
			}
			e.returnValue = s.Term()
		case *AppendEntriesResponse:
			// commit index bookkeeping
		}
		e.c <- nil
	}
}

type Peer struct {
	server            *server
	Name              string
	prevLogIndex      uint64
	mutex             sync.RWMutex
	stopChan          chan bool
	heartbeatInterval time.Duration
}

func (p *Peer) getPrevLogIndex() uint64 {
	p.mutex.RLock()
	defer p.mutex.RUnlock()
	return p.prevLogIndex
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

// Listens to the heartbeat timeout and flushes an AppendEntries RPC.
func (p *Peer) heartbeat(c chan bool) {
	stopChan := p.stopChan
	c <- true
	ticker := time.Tick(p.heartbeatInterval)
	for {
		select {
		case flush := <-stopChan:
			if flush {
				p.flush()
			}
			return
		case <-ticker:
			p.flush()
		}
	}
}

func (p *Peer) flush() {
	prevLogIndex := p.getPrevLogIndex()
	entries, prevLogTerm := p.server.log.getEntriesAfter(prevLogIndex)
	p.sendAppendEntriesRequest(prevLogIndex, prevLogTerm, entries)
}

func (p *Peer) sendAppendEntriesRequest(prevLogIndex, prevLogTerm uint64, entries []*LogEntry) {
	req := &AppendEntriesRequest{Term: p.server.Term(), PrevLogIndex: prevLogIndex, PrevLogTerm: prevLogTerm,
		CommitIndex: p.server.log.CommitIndex(), LeaderName: p.server.name, Entries: entries}
	// HTTP transporter round trip to the follower.
	resp := &AppendEntriesResponse{Term: req.Term, Success: true, peer: p.Name}
	p.mutex.Lock()
	if resp.Success && len(req.Entries) > 0 {
		p.prevLogIndex = req.Entries[len(req.Entries)-1].Index
	}
	p.mutex.Unlock()
	p.server.sendAsync(resp)
}

func main() {
	l := &Log{entries: []*LogEntry{{Index: 1, Term: 1, CommandName: "etcd:join"}, {Index: 2, Term: 3, CommandName: "etcd:set"}}, commitIndex: 2}
	s := &server{name: "node1", state: Leader, currentTerm: 3, peers: map[string]*Peer{}, log: l, c: make(chan *ev, 256)}
	for _, name := range []string{"node2", "node3"} {
		s.peers[name] = &Peer{server: s, Name: name, heartbeatInterval: 10 * time.Millisecond}
	}
	go s.leaderLoop()
	time.Sleep(12 * time.Millisecond) // both peers are flushing their first heartbeat

	// node3 was partitioned, timed out and comes back campaigning in term 5.
	resp, _ := s.send(&RequestVoteRequest{Term: 5, CandidateName: "node3"})
	fmt.Println("node1 stepped down, term", resp, "state", s.State())
}
