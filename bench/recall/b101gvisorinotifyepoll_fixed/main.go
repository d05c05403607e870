// Project: google/gvisor (pkg/sentry/fs/inotify.go Inotify.queueEvent and Inotify.Readiness, pkg/sentry/fs/inode_inotify.go Watches.Notify, pkg/sentry/kernel/epoll/epoll.go EventPoll.ReadEvents and pollEntry.Callback, pkg/waiter Queue.Notify), late 2018 (issue #121 "ReactJS app hangs running with gVisor").
// Bug: Inotify.queueEvent held the event queue lock i.evMu (deferred unlock) while it called i.Queue.Notify, which runs the epoll pollEntry callback and takes the epoll's listsMu, while epoll_wait (EventPoll.ReadEvents) holds listsMu and calls the inotify file's Readiness, which takes i.evMu. A task reading a watched directory and a task in epoll_wait on the inotify fd deadlock AB-BA; the fix releases evMu before notifying the waiters.
package main

import (
	"fmt"
	"sync"
	"time"
)

type EventMask uint64

const EventIn EventMask = 0x01

type EntryCallback interface{ Callback(e *Entry) }

type Entry struct {
	Callback EntryCallback
	mask     EventMask
}

type Queue struct {
	mu   sync.RWMutex
	list []*Entry
}

func (q *Queue) EventRegister(e *Entry, mask EventMask) {
	q.mu.Lock()
	e.mask = mask
	q.list = append(q.list, e)
	q.mu.Unlock()
}

func (q *Queue) Notify(mask EventMask) {
	q.mu.RLock()
	for _, e := range q.list {
		if mask&e.mask != 0 {
			e.Callback.Callback(e)
		}
	}
	q.mu.RUnlock()
}

type FileOperations interface {
	Readiness(mask EventMask) EventMask
	EventRegister(e *Entry, mask EventMask)
}

type File struct{ FileOperations }

type hostFileOperations struct {
	Queue
	fd int
}

func (h *hostFileOperations) Readiness(mask EventMask) EventMask {
	time.Sleep(100 * time.Millisecond) // fdnotifier.NonBlockingPoll(h.fd, mask)
	return mask & EventIn
}

const inAccess = 0x1

type Event struct {
	wd   int32
	mask uint32
	name string
}

// Inotify represents an inotify instance. Lock ordering: Inotify.mu ->
// Inode.Watches.mu -> Watch.mu -> Inotify.evMu.
type Inotify struct {
	// evMu *only* protects the event queue.
	evMu sync.Mutex
	Queue
	events []*Event
}

func (i *Inotify) Readiness(mask EventMask) EventMask {
	i.evMu.Lock()
	defer i.evMu.Unlock()
	if len(i.events) != 0 {
		return mask & EventIn
	}
	return 0
}

func (i *Inotify) queueEvent(ev *Event) {
	i.evMu.Lock()

	i.events = append(i.events, ev)

	// Release mutex before notifying waiters because we don't control what they
	// can do.
	i.evMu.Unlock()

	i.Queue.Notify(EventIn)
}

type Watch struct {
	owner *Inotify
	wd    int32
	mask  uint32
}

func (w *Watch) Notify(name string, events uint32) {
	if w.mask&events == 0 {
		return
	}
	w.owner.queueEvent(&Event{wd: w.wd, name: name, mask: w.mask & events})
}

type Watches struct {
	mu sync.RWMutex
	ws map[uint64]*Watch
}

func (w *Watches) Notify(name string, events uint32) {
	w.mu.RLock()
	for _, watch := range w.ws {
		watch.Notify(name, events)
	}
	w.mu.RUnlock()
}

type Inode struct{ Watches *Watches }

// Readdir serializes the directory (Dirent.Readdir) and generates IN_ACCESS.
func (i *Inode) Readdir() { i.Watches.Notify("", inAccess) }

type pollEntry struct {
	file     *File // FileIdentifier{File, Fd}
	userData int32
	waiter   Entry
	mask     EventMask
	epoll    *EventPoll
	ready    bool // curList == &e.readyList
}

type EventPoll struct {
	Queue

	// listsMu protects the lists. The full order is mu, observed file wait
	// queue mutex, then listsMu.
	listsMu     sync.Mutex
	readyList   []*pollEntry
	waitingList []*pollEntry
}

func (p *pollEntry) Callback(*Entry) {
	e := p.epoll
	e.listsMu.Lock()
	if !p.ready {
		p.ready = true
		e.readyList = append(e.readyList, p)
		e.listsMu.Unlock()
		e.Notify(EventIn)
		return
	}
	e.listsMu.Unlock()
}

func (e *EventPoll) AddEntry(f *File, mask EventMask, data int32) {
	entry := &pollEntry{file: f, userData: data, epoll: e, mask: mask}
	e.listsMu.Lock()
	e.waitingList = append(e.waitingList, entry)
	e.listsMu.Unlock()
	entry.waiter.Callback = entry
	f.EventRegister(&entry.waiter, mask)
	if f.Readiness(mask)&mask != 0 {
		entry.Callback(nil)
	}
}

func (e *EventPoll) ReadEvents(max int) (ret []int32) {
	e.listsMu.Lock()
	for _, entry := range e.readyList {
		if len(ret) >= max {
			break
		}
		if entry.file.Readiness(entry.mask)&entry.mask == 0 {
			entry.ready = false
			continue
		}
		ret = append(ret, entry.userData)
	}
	e.listsMu.Unlock()
	return ret
}

func main() {
	ino := &Inotify{}
	dir := &Inode{Watches: &Watches{ws: map[uint64]*Watch{1: {owner: ino, wd: 1, mask: inAccess}}}}
	ino.events = append(ino.events, &Event{wd: 1, mask: inAccess, name: "index.js"})

	ep := &EventPoll{}
	ep.AddEntry(&File{&hostFileOperations{fd: 7}}, EventIn, 3)
	ep.AddEntry(&File{ino}, EventIn, 4)

	done := make(chan struct{}, 2)
	go func() { // the dev server's event loop in epoll_wait
		fmt.Println("epoll_wait:", ep.ReadEvents(64))
		done <- struct{}{}
	}()
	time.Sleep(20 * time.Millisecond)
	go func() { // the bundler reads the watched directory
		dir.Readdir()
		fmt.Println("getdents done")
		done <- struct{}{}
	}()
	<-done
	<-done
	fmt.Println("ok")
}
