// Project: headscale (hscontrol/notifier/notifier.go, hscontrol/poll.go)
// Bug: Notifier.NotifyWithIgnore holds n.l.RLock() while doing a blocking send
// on every connected node's update channel. A long-poll session whose client
// went away stops reading its channel and, on the way out, calls
// RemoveNode(), which needs n.l.Lock(): the notifier is stuck in the send
// holding the read lock and the session is stuck waiting for the write lock.
// Fix: never block on a node channel while holding the notifier lock; the
// send is bounded by a timeout (select on the channel and a timer) so the lock
// is always released and RemoveNode can proceed.

package b21headscalenotify

import (
	"log"
	"sync"
	"testing"
	"time"
)

type StateUpdateType int

const (
	StatePeerChanged StateUpdateType = iota
	StatePeerRemoved
	StateDERPUpdated
)

type StateUpdate struct {
	Type         StateUpdateType
	ChangeNodes  []uint64
	Message      string
	DERPRegionID int
}

type Notifier struct {
	l           sync.RWMutex
	nodes       map[string]chan<- StateUpdate
	connected   map[string]bool
	sendTimeout time.Duration
}

func NewNotifier() *Notifier {
	return &Notifier{
		nodes:       make(map[string]chan<- StateUpdate),
		connected:   make(map[string]bool),
		sendTimeout: 50 * time.Millisecond,
	}
}

func (n *Notifier) AddNode(machineKey string, c chan<- StateUpdate) {
	n.l.Lock()
	defer n.l.Unlock()

	n.nodes[machineKey] = c
	n.connected[machineKey] = true
}

func (n *Notifier) RemoveNode(machineKey string) {
	n.l.Lock()
	defer n.l.Unlock()

	if len(n.nodes) == 0 {
		return
	}
	delete(n.nodes, machineKey)
	n.connected[machineKey] = false
}

func (n *Notifier) IsConnected(machineKey string) bool {
	n.l.RLock()
	defer n.l.RUnlock()

	return n.connected[machineKey]
}

func (n *Notifier) NotifyAll(update StateUpdate) {
	n.NotifyWithIgnore(update)
}

func (n *Notifier) NotifyWithIgnore(update StateUpdate, ignore ...string) {
	n.l.RLock()
	defer n.l.RUnlock()

	for key, c := range n.nodes {
		if isStringInSlice(ignore, key) {
			continue
		}
		c <- update
	}
}

func isStringInSlice(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type Headscale struct {
	nodeNotifier *Notifier
	dbMu         sync.Mutex
	online       map[string]bool
}

func (h *Headscale) updateNodeOnlineStatus(online bool, machineKey string) {
	h.dbMu.Lock()
	defer h.dbMu.Unlock()
	time.Sleep(40 * time.Millisecond) // database write
	h.online[machineKey] = online
}

// handlePoll is the long-poll loop of one tailscale client.
func (h *Headscale) handlePoll(machineKey string, clientGone <-chan struct{}, got chan<- StateUpdate) {
	updateChan := make(chan StateUpdate)
	h.nodeNotifier.AddNode(machineKey, updateChan)
	defer h.nodeNotifier.RemoveNode(machineKey)

	for {
		select {
		case u := <-updateChan:
			got <- u
		case <-clientGone:
			log.Printf("node %s: client disconnected, closing poll", machineKey)
			h.updateNodeOnlineStatus(false, machineKey)
			return
		}
	}
}

func TestNotifierSendWhileNodeDisconnects(t *testing.T) {
	h := &Headscale{nodeNotifier: NewNotifier(), online: make(map[string]bool)}

	clientGone := make(chan struct{})
	got := make(chan StateUpdate, 16)
	var wg sync.WaitGroup

	wg.Add(1)
	go func() {
		defer wg.Done()
		h.handlePoll("mkey:node1", clientGone, got)
	}()
	for !h.nodeNotifier.IsConnected("mkey:node1") {
		time.Sleep(time.Millisecond)
	}

	// The client disconnects; shortly after, another node changes.
	close(clientGone)
	time.Sleep(10 * time.Millisecond)

	wg.Add(1)
	go func() {
		defer wg.Done()
		h.nodeNotifier.NotifyAll(StateUpdate{Type: StatePeerChanged, ChangeNodes: []uint64{2}})
	}()

	wg.Wait()
}
