// Project: nats-server (server/accounts.go, server/events.go).
//
// Bug (approximate): the system-account event code (Server.sendAccConnsUpdate ->
// Account.statz) read the account's counters under a.mu.RLock() and, to fill in
// the connection count, called the exported Account.NumLocalConnections(), which
// takes a.mu.RLock() again. A client connecting to the same account at that
// moment (client.registerWithAccount -> Account.addClient, a.mu.Lock()) queues
// as a writer between the two read locks: the internal send loop and the new
// client's readLoop hang, and the server stops accepting connections for that
// account.
// Fix: statz uses the lock-free numLocalConnections() helper.
package natsstatz

import (
	"encoding/json"
	"sync"
	"testing"
	"time"
)

const (
	CLIENT = iota
	SYSTEM
	LEAF
)

type client struct {
	cid  uint64
	kind int
	acc  *Account
}

type DataStats struct {
	Msgs  int64 `json:"msgs"`
	Bytes int64 `json:"bytes"`
}

type AccountStat struct {
	Account    string    `json:"acc"`
	Conns      int       `json:"conns"`
	LeafNodes  int       `json:"leafnodes"`
	TotalConns int       `json:"total_conns"`
	Sent       DataStats `json:"sent"`
	Received   DataStats `json:"received"`
}

type Account struct {
	Name string

	mu         sync.RWMutex
	clients    map[*client]struct{}
	sysclients int32
	nleafs     int32
	nrclients  int32
	mconns     int32
	inMsgs     int64
	inBytes    int64
	outMsgs    int64
	outBytes   int64
}

func NewAccount(name string) *Account {
	return &Account{Name: name, clients: map[*client]struct{}{}, mconns: -1}
}

// addClient registers a client with the account.
func (a *Account) addClient(c *client) int {
	a.mu.Lock() // DEADLOCK HERE (writer waits for statz's first RLock)
	defer a.mu.Unlock()
	n := len(a.clients)
	a.clients[c] = struct{}{}
	if c.kind == SYSTEM {
		a.sysclients++
	} else if c.kind == LEAF {
		a.nleafs++
	}
	return n
}

// numLocalConnections returns the number of non-system, non-leaf clients.
// Lock should be held.
func (a *Account) numLocalConnections() int {
	return len(a.clients) - int(a.sysclients) - int(a.nleafs)
}

// NumLocalConnections returns the active number of clients for this account
// that are not system or leafnode accounts.
func (a *Account) NumLocalConnections() int {
	a.mu.RLock() // DEADLOCK HERE (nested RLock behind the pending writer)
	defer a.mu.RUnlock()
	return a.numLocalConnections()
}

func (a *Account) numLocalLeafNodes() int { return int(a.nleafs) }

// statz is called by the system account's event code.
func (a *Account) statz() *AccountStat {
	a.mu.RLock()
	defer a.mu.RUnlock()
	leafs := a.numLocalLeafNodes()
	sent, recv := a.trafficStats()
	return &AccountStat{
		Account:    a.Name,
		LeafNodes:  leafs,
		Sent:       sent,
		Received:   recv,
		Conns:      a.NumLocalConnections(),
		TotalConns: a.NumLocalConnections() + leafs,
	}
}

func (a *Account) trafficStats() (sent, recv DataStats) {
	time.Sleep(30 * time.Millisecond) // walks per-route / per-gateway counters
	return DataStats{Msgs: a.outMsgs, Bytes: a.outBytes}, DataStats{Msgs: a.inMsgs, Bytes: a.inBytes}
}

type pubMsg struct {
	subj string
	msg  []byte
}

type Server struct {
	sendq chan *pubMsg
}

// sendAccConnsUpdate publishes $SYS.ACCOUNT.<acc>.CONNS.
func (s *Server) sendAccConnsUpdate(a *Account) {
	stat := a.statz()
	b, _ := json.Marshal(stat)
	s.sendq <- &pubMsg{subj: "$SYS.ACCOUNT." + a.Name + ".CONNS", msg: b}
}

func (c *client) registerWithAccount(acc *Account) {
	c.acc = acc
	acc.addClient(c)
}

func TestAccountConnsUpdateWhileClientConnects(t *testing.T) {
	s := &Server{sendq: make(chan *pubMsg, 8)}
	acc := NewAccount("APP")
	(&client{cid: 1, kind: CLIENT}).registerWithAccount(acc)
	(&client{cid: 2, kind: LEAF}).registerWithAccount(acc)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // accConnsUpdate timer in events.go
		defer wg.Done()
		s.sendAccConnsUpdate(acc)
	}()
	time.AfterFunc(10*time.Millisecond, func() { // new client CONNECT processed in readLoop
		defer wg.Done()
		(&client{cid: 3, kind: CLIENT}).registerWithAccount(acc)
	})
	wg.Wait()

	pm := <-s.sendq
	var st AccountStat
	if err := json.Unmarshal(pm.msg, &st); err != nil {
		t.Fatal(err)
	}
	if st.Conns != 1 || st.LeafNodes != 1 {
		t.Fatalf("unexpected statz %+v", st)
	}
}
