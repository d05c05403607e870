// Project: juanfont/headscale (hscontrol/db/node.go HSDatabase.GetNode and ExpireEphemeralNodes, hscontrol/db/users.go ListNodesByUser), v0.23.0 alpha development, January 2024.
// Bug: GetNode read-locks the database RWMutex hsdb.mu and then calls the exported ListNodesByUser, which read-locks hsdb.mu again instead of using listNodesByUser; when the ephemeral node garbage collector calls ExpireEphemeralNodes (hsdb.mu.Lock) between the two read locks, the nested RLock queues behind the writer that waits for the first RLock, and headscale hangs (PR #1695 "fix recusive rwmutex rlock which cause headscale deadlock"; superseded by PR #1701, which replaced the database locks with transactions).
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

var (
	ErrNodeNotFound = errors.New("node not found")
	ErrUserNotFound = errors.New("user not found")
)

type User struct {
	ID   uint
	Name string
}

type Node struct {
	ID        uint64
	Hostname  string
	UserID    uint
	LastSeen  *time.Time
	Ephemeral bool
}

func (node *Node) IsEphemeral() bool { return node.Ephemeral }

type Nodes []*Node

// store stands in for the gorm handle hsdb.db.
type store struct {
	users []User
	nodes map[uint64]*Node
}

type StateUpdate struct{ Removed []uint64 }

type Notifier struct {
	l sync.RWMutex
}

func (n *Notifier) NotifyAll(update StateUpdate) {
	n.l.RLock()
	defer n.l.RUnlock()
	fmt.Println("notifier: peers removed:", update.Removed)
}

type HSDatabase struct {
	db       *store
	notifier *Notifier

	mu sync.RWMutex
}

// testHookGetNode widens the window between GetNode's read lock and the
// nested one; it is nil in headscale.
var testHookGetNode func()

// GetNode finds a Node by name and user and returns the Node struct.
func (hsdb *HSDatabase) GetNode(user string, name string) (*Node, error) {
	hsdb.mu.RLock()
	defer hsdb.mu.RUnlock()

	if testHookGetNode != nil {
		testHookGetNode()
	}
	nodes, err := hsdb.ListNodesByUser(user)
	if err != nil {
		return nil, err
	}
	for _, m := range nodes {
		if m.Hostname == name {
			return m, nil
		}
	}
	return nil, ErrNodeNotFound
}

// ListNodesByUser gets all the nodes in a given user.
func (hsdb *HSDatabase) ListNodesByUser(name string) (Nodes, error) {
	hsdb.mu.RLock()
	defer hsdb.mu.RUnlock()

	return hsdb.listNodesByUser(name)
}

func (hsdb *HSDatabase) listNodesByUser(name string) (Nodes, error) {
	if strings.ContainsAny(name, " /") {
		return nil, fmt.Errorf("invalid user name %q", name)
	}
	user, err := hsdb.getUser(name)
	if err != nil {
		return nil, err
	}
	nodes := Nodes{}
	for _, n := range hsdb.db.nodes {
		if n.UserID == user.ID {
			nodes = append(nodes, n)
		}
	}
	return nodes, nil
}

func (hsdb *HSDatabase) getUser(name string) (*User, error) {
	for i := range hsdb.db.users {
		if hsdb.db.users[i].Name == name {
			return &hsdb.db.users[i], nil
		}
	}
	return nil, ErrUserNotFound
}

func (hsdb *HSDatabase) listUsers() ([]User, error) { return hsdb.db.users, nil }

func (hsdb *HSDatabase) deleteNode(node *Node) error {
	delete(hsdb.db.nodes, node.ID)
	return nil
}

func (hsdb *HSDatabase) ExpireEphemeralNodes(inactivityThreshhold time.Duration) {
	hsdb.mu.Lock()
	defer hsdb.mu.Unlock()

	users, err := hsdb.listUsers()
	if err != nil {
		return
	}
	for _, user := range users {
		nodes, err := hsdb.listNodesByUser(user.Name)
		if err != nil {
			return
		}
		expired := make([]uint64, 0)
		for idx, node := range nodes {
			if node.IsEphemeral() && node.LastSeen != nil &&
				time.Now().After(node.LastSeen.Add(inactivityThreshhold)) {
				expired = append(expired, node.ID)
				_ = hsdb.deleteNode(nodes[idx])
			}
		}
		if len(expired) > 0 {
			hsdb.notifier.NotifyAll(StateUpdate{Removed: expired})
		}
	}
}

func main() {
	old := time.Now().Add(-time.Hour)
	hsdb := &HSDatabase{notifier: &Notifier{}, db: &store{
		users: []User{{ID: 1, Name: "alice"}},
		nodes: map[uint64]*Node{
			1: {ID: 1, Hostname: "laptop", UserID: 1},
			2: {ID: 2, Hostname: "ci-runner", UserID: 1, Ephemeral: true, LastSeen: &old},
		},
	}}

	readerHolds := make(chan struct{})
	testHookGetNode = func() {
		close(readerHolds)
		time.Sleep(100 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { // one tick of Headscale.expireEphemeralNodes
		<-readerHolds
		hsdb.ExpireEphemeralNodes(30 * time.Second)
		close(done)
	}()

	// API request looking a node up by user and hostname.
	node, err := hsdb.GetNode("alice", "laptop")
	fmt.Println("GetNode:", node.Hostname, err)
	<-done
}
