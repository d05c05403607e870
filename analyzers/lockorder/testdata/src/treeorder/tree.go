// Package treeorder: objects of one type linked as a tree, each with its
// own lock. Taking a parent's lock while holding a child's, and a
// child's while holding its parent's, deadlock on a parent and a child
// that two goroutines reach from each end.
package treeorder

import "sync"

type Queue struct {
	lock     sync.RWMutex
	parent   *Queue
	children map[string]*Queue
	pending  int
}

// IncPending updates the queue, then its ancestors, holding its own lock
// throughout: child, then parent.
func (q *Queue) IncPending(n int) {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.pending += n
	if q.parent != nil {
		q.parent.IncPending(n) // want `lock order inversion along a tree of Queue: Queue.lock then its parent's in Queue.IncPending .* but Queue.lock then a child's in children in Queue.Pending`
	}
}

func (q *Queue) GetPending() int {
	q.lock.RLock()
	defer q.lock.RUnlock()
	return q.pending
}

// Pending sums the children with the parent read-locked: parent, then
// child.
func (q *Queue) Pending() int {
	q.lock.RLock()
	defer q.lock.RUnlock()
	sum := 0
	for _, c := range q.children {
		sum += c.GetPending()
	}
	return sum
}

// Segment: a child closes itself and unlinks from its parent; a parent
// sends itself with every child locked.
type Segment struct {
	sync.Mutex
	parent *Segment
	subs   []*Segment
	done   bool
}

func (s *Segment) remove(child *Segment) {
	s.Lock()
	defer s.Unlock()
	for i, c := range s.subs {
		if c == child {
			s.subs = append(s.subs[:i], s.subs[i+1:]...)
			return
		}
	}
}

func (s *Segment) Close() {
	s.Lock()
	defer s.Unlock()
	s.done = true
	if s.parent != nil {
		s.parent.remove(s) // want `lock order inversion along a tree of Segment: Segment.Mutex then its parent's in Segment.Close .* but Segment.Mutex then a child's in subs in Segment.send .*via pack`
	}
}

func pack(s *Segment) int {
	n := 0
	for _, c := range s.subs {
		c.Lock()
		n++
		c.Unlock()
	}
	return n
}

func (s *Segment) send() int {
	s.Lock()
	defer s.Unlock()
	return pack(s)
}

// The correct counterparts. Node always locks downward: a parent, then
// its children; an update of a child releases its own lock before it
// walks up.
type Node struct {
	mu       sync.Mutex
	parent   *Node
	children []*Node
	count    int
}

func (n *Node) Add(d int) {
	n.mu.Lock()
	n.count += d
	n.mu.Unlock()
	if n.parent != nil {
		n.parent.Add(d)
	}
}

func (n *Node) Total() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.count
	for _, c := range n.children {
		c.mu.Lock()
		t += c.count
		c.mu.Unlock()
	}
	return t
}

// Dir only ever reads both ways: two readers wait for no one.
type Dir struct {
	mu      sync.RWMutex
	parent  *Dir
	entries []*Dir
	name    string
}

func (d *Dir) Path() string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.parent == nil {
		return d.name
	}
	return d.parent.Path() + "/" + d.name
}

func (d *Dir) Names() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []string
	for _, e := range d.entries {
		e.mu.RLock()
		out = append(out, e.name)
		e.mu.RUnlock()
	}
	return out
}
