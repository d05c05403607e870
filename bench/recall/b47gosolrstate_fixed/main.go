// Project: fullstorydev/gosolr (Solr cluster-state monitor used by FullStory's
// search tier), December 2021.
// Files: solrmonitor/solrmonitor.go (SolrMonitor.GetCurrentState,
// SolrMonitor.GetCollectionState, SolrMonitor.doGetCollectionState,
// callbacks.ChildrenChanged, SolrMonitor.childrenChanged,
// SolrMonitor.updateCollections), solrmonitor/zkwatcherman.go (the ZooKeeper
// event loop that drives the callbacks).
// PR: fullstorydev/gosolr#29 "Removed recursive readlock. (this got
// introduced unintentionally)".
//
// SolrMonitor keeps an in-memory copy of the Solr cluster state that a
// ZooKeeper watcher keeps up to date. GetCurrentState read-locks the monitor
// and, for every known collection, calls doGetCollectionState, the helper that
// the public GetCollectionState also uses under its own read lock. A refactor
// left doGetCollectionState taking c.mu.RLock itself, so both callers
// read-lock the monitor twice. When ZooKeeper reports a change of
// /solr/collections, the watcher goroutine runs callbacks.ChildrenChanged ->
// childrenChanged -> updateCollections, which write-locks c.mu to add the new
// collection. If that writer queues between the outer and the nested read
// lock, the nested RLock waits for the writer and the writer waits for the
// outer read lock: the query router asking for cluster state and the ZK event
// loop both hang, and the monitor never sees another update. The fix removes
// the lock from doGetCollectionState; its callers already hold it.
//
// This is the fixed version.
package main

import (
	"fmt"
	"sync"
	"time"
)

type CollectionState struct {
	Shards     map[string]string
	ConfigName string
}

type ClusterState map[string]*CollectionState

type Callbacks interface {
	ChildrenChanged(path string, children []string) error
	DataChanged(path string, data string) error
}

type collection struct {
	mu              sync.RWMutex
	name            string
	parent          *SolrMonitor
	collectionState *CollectionState
}

type SolrMonitor struct {
	solrRoot    string
	mu          sync.RWMutex
	collections map[string]*collection
	liveNodes   []string
}

type callbacks struct {
	*SolrMonitor
}

var _ Callbacks = callbacks{}

func (c callbacks) ChildrenChanged(path string, children []string) error {
	return c.SolrMonitor.childrenChanged(path, children)
}

func (c callbacks) DataChanged(path string, data string) error { return nil }

func (c *SolrMonitor) GetCurrentState() (ClusterState, error) {
	result := make(ClusterState)
	c.mu.RLock()
	defer c.mu.RUnlock()
	for name := range c.collections {
		time.Sleep(50 * time.Millisecond) // thousands of collections on a big cluster
		collectionState, err := c.doGetCollectionState(name)
		if err != nil {
			continue
		}
		if collectionState != nil {
			result[name] = collectionState
		}
	}
	return result, nil
}

func (c *SolrMonitor) GetCollectionState(name string) (*CollectionState, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.doGetCollectionState(name)
}

func (c *SolrMonitor) doGetCollectionState(name string) (*CollectionState, error) {
	coll := c.collections[name]
	if coll == nil {
		return nil, nil
	}
	coll.mu.RLock()
	defer coll.mu.RUnlock()
	return coll.collectionState, nil
}

func (c *SolrMonitor) childrenChanged(path string, children []string) error {
	switch path {
	case c.solrRoot + "/collections":
		return c.updateCollections(children)
	case c.solrRoot + "/live_nodes":
		c.mu.Lock()
		defer c.mu.Unlock()
		c.liveNodes = children
		return nil
	default:
		return fmt.Errorf("solrmonitor: unknown childrenChanged: %s", path)
	}
}

// Update the set of active collections.
func (c *SolrMonitor) updateCollections(collections []string) error {
	var added []*collection
	func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		exists := map[string]bool{}
		for _, name := range collections {
			exists[name] = true
			if _, found := c.collections[name]; !found {
				coll := &collection{name: name, parent: c}
				c.collections[name] = coll
				added = append(added, coll)
			}
		}
		for name := range c.collections {
			if !exists[name] {
				delete(c.collections, name)
			}
		}
	}()
	for _, coll := range added {
		coll.mu.Lock()
		coll.collectionState = &CollectionState{Shards: map[string]string{"shard1": "active"}}
		coll.mu.Unlock()
	}
	return nil
}

// zkWatcherMan delivers ZooKeeper watch events to the callbacks, one at a time.
type zkEvent struct {
	path     string
	children []string
}

func runZkWatcher(cb Callbacks, events <-chan zkEvent, done chan<- struct{}) {
	for ev := range events {
		if err := cb.ChildrenChanged(ev.path, ev.children); err != nil {
			fmt.Println("solrmonitor:", err)
		}
	}
	close(done)
}

func main() {
	c := &SolrMonitor{solrRoot: "/solr", collections: map[string]*collection{}}
	_ = c.updateCollections([]string{"org_1", "org_2"})

	events := make(chan zkEvent, 1)
	zkDone := make(chan struct{})
	go runZkWatcher(callbacks{c}, events, zkDone)

	stateDone := make(chan struct{})
	go func() { // the query router refreshing its routing table
		state, _ := c.GetCurrentState()
		fmt.Println("collections in state:", len(state))
		close(stateDone)
	}()

	time.Sleep(20 * time.Millisecond)
	events <- zkEvent{path: "/solr/collections", children: []string{"org_1", "org_2", "org_3"}}
	close(events)
	<-stateDone
	<-zkDone
	fmt.Println("collections known:", len(c.collections))
}
