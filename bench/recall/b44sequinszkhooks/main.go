// Project: stripe/sequins (static key/value database serving Hadoop output,
// coordinated through ZooKeeper), mid-2017.
// Files/functions: zk/watcher.go: Watcher.run, reconnect, runHooks,
// cancelWatches, CreateEphemeral, createEphemeral, createAll.
// Issue/PR: stripe/sequins PR #90 "If we acquire `w.lock` and `w.hooksLock`,
// acquire the former first."
//
// After a session error the run loop calls reconnect, which write-locks
// w.lock (the connection) while it dials, recreates the base path and replays
// the ephemeral nodes through runHooks, which takes hooksLock. A node
// advertising itself calls CreateEphemeral, which took hooksLock first and
// then read-locked w.lock: an AB-BA inversion that hangs the watcher and
// every caller behind it. The fix takes w.lock before hooksLock everywhere.
package main

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"
)

// zkConn is an in-memory stand-in for github.com/samuel/go-zookeeper's Conn.
type zkConn struct{ nodes map[string]bool }

type zkEvent struct{ State string }

var dialDelay = 60 * time.Millisecond

func zkConnect(servers []string, timeout time.Duration) (*zkConn, <-chan zkEvent, error) {
	time.Sleep(dialDelay) // TCP dial and session handshake
	events := make(chan zkEvent, 1)
	events <- zkEvent{State: "StateConnected"}
	return &zkConn{nodes: map[string]bool{}}, events, nil
}

func (c *zkConn) Create(p string, ephemeral bool) error {
	if c.nodes[p] {
		return errors.New("zk: node already exists")
	}
	c.nodes[p] = true
	return nil
}

type Watcher struct {
	lock           sync.RWMutex
	zkServers      []string
	connectTimeout time.Duration
	sessionTimeout time.Duration
	prefix         string
	conn           *zkConn
	errs           chan error
	shutdown       chan bool

	hooksLock      sync.Mutex
	ephemeralNodes map[string]bool
}

func Connect(zkServers []string, prefix string, connectTimeout, sessionTimeout time.Duration) (*Watcher, error) {
	w := &Watcher{zkServers: zkServers, connectTimeout: connectTimeout, sessionTimeout: sessionTimeout,
		prefix: path.Join(prefix, "v1"), errs: make(chan error, 1), shutdown: make(chan bool),
		ephemeralNodes: make(map[string]bool)}
	if err := w.reconnect(); err != nil {
		return nil, fmt.Errorf("Zookeeper error: %s", err)
	}
	go w.run()
	return w, nil
}

func (w *Watcher) reconnect() error {
	w.lock.Lock()
	defer w.lock.Unlock()

	conn, events, err := zkConnect(w.zkServers, w.sessionTimeout)
	if err != nil {
		return err
	}
	w.conn = conn // the previous session's conn is closed here
	connectTimeout := time.NewTimer(w.connectTimeout)
	defer connectTimeout.Stop()
	select {
	case <-connectTimeout.C:
		return errors.New("connection timeout")
	case event := <-events:
		if event.State != "StateConnected" {
			return fmt.Errorf("connection error: %v", event)
		}
	}
	if err := w.createAll(w.prefix); err != nil {
		return fmt.Errorf("creating base path: %s", err)
	}
	// Every time we connect, reset watches and recreate ephemeral nodes.
	return w.runHooks()
}

// Must be called with `w.lock` locked for write.
func (w *Watcher) runHooks() error {
	w.hooksLock.Lock()
	defer w.hooksLock.Unlock()
	for node := range w.ephemeralNodes {
		if err := w.createEphemeral(node); err != nil {
			return err
		}
	}
	return nil
}

func (w *Watcher) cancelWatches() {
	w.hooksLock.Lock()
	defer w.hooksLock.Unlock()
}

func (w *Watcher) run() {
	first := true // Connect already connected once
Reconnect:
	for {
		if !first {
			wait := time.NewTimer(w.sessionTimeout)
			select {
			case <-w.shutdown:
				wait.Stop()
				break Reconnect
			case <-wait.C:
			}
			if err := w.reconnect(); err != nil {
				continue Reconnect
			}
		} else {
			first = false
		}
		select {
		case <-w.shutdown:
			break Reconnect
		case err := <-w.errs:
			fmt.Println("Disconnecting from zookeeper because of error:", err)
			w.cancelWatches()
			continue Reconnect
		}
	}
	w.cancelWatches()
}

// CreateEphemeral creates an ephemeral node that is recreated on reconnect.
func (w *Watcher) CreateEphemeral(node string) {
	w.hooksLock.Lock()
	defer w.hooksLock.Unlock()

	w.lock.RLock()
	defer w.lock.RUnlock()

	node = path.Join(w.prefix, node)
	w.ephemeralNodes[node] = true
	if err := w.createEphemeral(node); err != nil {
		sendErr(w.errs, err)
	}
}

// Must be called with `w.lock` locked (either for read or write).
func (w *Watcher) createEphemeral(node string) error {
	parent, _ := path.Split(node)
	if err := w.createAll(parent); err != nil {
		return err
	}
	return w.conn.Create(node, true)
}

func (w *Watcher) createAll(node string) error {
	node = path.Clean(node)
	if base, _ := path.Split(node); base != "" && base != "/" {
		if err := w.createAll(base); err != nil {
			return err
		}
	}
	if err := w.conn.Create(node, false); err != nil && !strings.Contains(err.Error(), "exists") {
		return err
	}
	return nil
}

func sendErr(errs chan error, err error) {
	select {
	case errs <- err:
	default:
	}
}

func main() {
	w, err := Connect([]string{"zk1:2181"}, "/sequins/db", time.Second, 10*time.Millisecond)
	if err != nil {
		panic(err)
	}
	sendErr(w.errs, errors.New("zk: session has been expired by the server"))
	time.Sleep(30 * time.Millisecond) // the run loop is now inside reconnect
	w.CreateEphemeral("nodes/host-1")
	fmt.Println("advertised host-1")
}
