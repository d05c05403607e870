// dubbo-go (apache/dubbo-go), PR #1247, fixing issue #1233 (2021): the
// ZooKeeper registry's ZkEventListener stops delivering provider changes.
//
// ZkEventListener records the ZooKeeper paths it already watches in pathMap,
// guarded by pathMapLock. listenDirEvent, the directory loop ListenServiceEvent
// starts, locks pathMapLock for each child of the provider directory and, when
// the child is already known, logs "has already been listened" and continues
// without unlocking. Its first listing sees the providers ListenServiceEvent
// registered, so it leaks the lock on the first and blocks at the second.
// Then every provider watcher (ListenServiceNodeEvent) blocks when its provider
// goes away, and so does the next ListenServiceEvent. The exact shape of the
// loop before the PR is reconstructed.
//
// The fixed twin unlocks pathMapLock before the continue, as the PR does.
package main

import (
	"fmt"
	"log"
	"path"
	"sync"
	"time"
)

type EventType int

const (
	EventTypeAdd EventType = iota
	EventTypeDel
	EventNodeDeleted
	EventNodeChildrenChanged
)

type Event struct {
	Path   string
	Action EventType
}

type DataListener interface {
	DataChange(event Event) bool
}

type URL struct{ Service string }

type zkConn struct {
	mu      sync.Mutex
	nodes   map[string][]byte
	watches map[string][]chan Event
}

func (c *zkConn) watch(p string) <-chan Event {
	ch := make(chan Event, 1)
	c.watches[p] = append(c.watches[p], ch)
	return ch
}

func (c *zkConn) fire(p string, ev Event) {
	for _, ch := range c.watches[p] {
		ch <- ev
	}
	delete(c.watches, p)
}

func (c *zkConn) ChildrenW(p string) ([]string, <-chan Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var children []string
	for n := range c.nodes {
		if path.Dir(n) == p {
			children = append(children, path.Base(n))
		}
	}
	return children, c.watch(p + "/")
}

func (c *zkConn) ExistsW(p string) <-chan Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watch(p)
}

func (c *zkConn) Delete(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.nodes, p)
	c.fire(p, Event{Path: p, Action: EventNodeDeleted})
	c.fire(path.Dir(p)+"/", Event{Path: path.Dir(p), Action: EventNodeChildrenChanged})
}

type ZookeeperClient struct {
	Conn *zkConn
	exit chan struct{}
}

func (z *ZookeeperClient) Done() <-chan struct{}                          { return z.exit }
func (z *ZookeeperClient) GetChildrenW(p string) ([]string, <-chan Event) { return z.Conn.ChildrenW(p) }
func (z *ZookeeperClient) ExistW(p string) <-chan Event                   { return z.Conn.ExistsW(p) }

type ZkEventListener struct {
	client      *ZookeeperClient
	pathMapLock sync.Mutex
	pathMap     map[string]struct{}
	wg          sync.WaitGroup
}

func (l *ZkEventListener) ListenServiceNodeEvent(zkPath string) bool {
	defer l.wg.Done()
	keyEventCh := l.client.ExistW(zkPath)
	select {
	case ev := <-keyEventCh:
		return ev.Action == EventNodeDeleted
	case <-l.client.Done():
		return false
	}
}

func (l *ZkEventListener) watchNode(dubboPath string, listener DataListener) {
	listener.DataChange(Event{Path: dubboPath, Action: EventTypeAdd})
	l.wg.Add(1)
	go func(zkPath string, listener DataListener) {
		if l.ListenServiceNodeEvent(zkPath) {
			listener.DataChange(Event{Path: zkPath, Action: EventTypeDel})
			l.pathMapLock.Lock()
			delete(l.pathMap, zkPath)
			l.pathMapLock.Unlock()
		}
	}(dubboPath, listener)
}

func (l *ZkEventListener) listenDirEvent(conf *URL, zkPath string, listener DataListener) {
	defer l.wg.Done()
	for {
		children, childEventCh := l.client.GetChildrenW(zkPath)
		for _, c := range children {
			dubboPath := path.Join(zkPath, c)
			l.pathMapLock.Lock()
			if _, ok := l.pathMap[dubboPath]; ok {
				log.Printf("@zkPath %s has already been listened.", dubboPath)
				continue
			}
			l.pathMap[dubboPath] = struct{}{}
			l.pathMapLock.Unlock()
			l.watchNode(dubboPath, listener)
		}
		select {
		case <-childEventCh:
		case <-l.client.Done():
			return
		}
	}
}

func (l *ZkEventListener) ListenServiceEvent(conf *URL, zkPath string, listener DataListener) {
	l.pathMapLock.Lock()
	l.pathMap[zkPath] = struct{}{}
	l.pathMapLock.Unlock()
	children, _ := l.client.GetChildrenW(zkPath)
	for _, c := range children {
		dubboPath := path.Join(zkPath, c)
		l.pathMapLock.Lock()
		_, ok := l.pathMap[dubboPath]
		l.pathMap[dubboPath] = struct{}{}
		l.pathMapLock.Unlock()
		if !ok {
			l.watchNode(dubboPath, listener)
		}
	}
	l.wg.Add(1)
	go l.listenDirEvent(conf, zkPath, listener)
}

type RegistryDataListener struct {
	mu     sync.Mutex
	events []string
}

func (r *RegistryDataListener) DataChange(event Event) bool {
	r.mu.Lock()
	r.events = append(r.events, fmt.Sprintf("%d:%s", event.Action, path.Base(event.Path)))
	r.mu.Unlock()
	return true
}

func main() {
	conn := &zkConn{nodes: map[string][]byte{}, watches: map[string][]chan Event{}}
	user, order := "/dubbo/com.ikurento.user.UserProvider/providers", "/dubbo/com.ikurento.user.OrderProvider/providers"
	for _, p := range []string{user + "/10.0.0.1:20000", user + "/10.0.0.2:20000", order + "/10.0.0.3:20000"} {
		conn.nodes[p] = []byte("dubbo://" + path.Base(p))
	}
	l := &ZkEventListener{client: &ZookeeperClient{Conn: conn, exit: make(chan struct{})}, pathMap: map[string]struct{}{}}
	rl := &RegistryDataListener{}
	l.ListenServiceEvent(&URL{Service: "UserProvider"}, user, rl)
	time.Sleep(50 * time.Millisecond)
	conn.Delete(user + "/10.0.0.1:20000")
	conn.Delete(user + "/10.0.0.2:20000")
	time.Sleep(50 * time.Millisecond)
	l.ListenServiceEvent(&URL{Service: "OrderProvider"}, order, rl)
	fmt.Println("subscribed to", order)
}
