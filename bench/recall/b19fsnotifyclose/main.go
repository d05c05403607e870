// Project: fsnotify/fsnotify (inotify backend, Watcher.Close)
// Bug: Watcher.Close held w.mu while it signalled the reader goroutine and
// waited on <-w.doneResp. The readEvents goroutine, still processing a
// pending inotify event, needs w.mu to map the watch descriptor to a path
// (and to drop IN_IGNORED watches) before it can notice w.done and close
// doneResp: lock held across a channel receive whose sender needs the lock.
// Fix: Close only marks the watcher closed under w.mu, then releases it
// before waking the reader and waiting for doneResp.

package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Op uint32

const (
	Create Op = 1 << iota
	Write
	Remove
	Rename
	Chmod
)

const inIgnored = 0x8000

type Event struct {
	Name string
	Op   Op
}

type rawEvent struct {
	wd   int
	mask uint32
	name string
}

type watch struct {
	wd    int
	flags uint32
}

type Watcher struct {
	Events chan Event
	Errors chan error

	mu       sync.Mutex
	closed   bool
	watches  map[string]*watch
	paths    map[int]string
	raw      chan rawEvent // stands in for the inotify fd + epoll poller
	done     chan struct{}
	doneResp chan struct{}
}

func NewWatcher() *Watcher {
	w := &Watcher{
		Events:   make(chan Event, 1),
		Errors:   make(chan error),
		watches:  map[string]*watch{},
		paths:    map[int]string{},
		raw:      make(chan rawEvent, 16),
		done:     make(chan struct{}),
		doneResp: make(chan struct{}),
	}
	go w.readEvents()
	return w
}

func (w *Watcher) Add(name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("inotify instance already closed")
	}
	wd := len(w.watches) + 1
	w.watches[name] = &watch{wd: wd, flags: 0xfff}
	w.paths[wd] = name
	return nil
}

func (w *Watcher) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	close(w.done)
	<-w.doneResp
	return nil
}

func (w *Watcher) readEvents() {
	defer close(w.doneResp)
	defer close(w.Events)
	for {
		var raw rawEvent
		select {
		case <-w.done:
			return
		case raw = <-w.raw:
		}
		time.Sleep(30 * time.Millisecond) // unix.Read + parsing the buffer

		w.mu.Lock()
		name, ok := w.paths[raw.wd]
		if ok && raw.mask&inIgnored == inIgnored {
			delete(w.paths, raw.wd)
			delete(w.watches, name)
		}
		w.mu.Unlock()
		if !ok || raw.mask&inIgnored == inIgnored {
			continue
		}
		select {
		case w.Events <- Event{Name: name + "/" + raw.name, Op: Op(raw.mask & 0x1f)}:
		case <-w.done:
			return
		}
	}
}

func main() {
	w := NewWatcher()
	if err := w.Add("/etc/app"); err != nil {
		panic(err)
	}
	// The kernel reports a write to /etc/app/config.yaml ...
	w.raw <- rawEvent{wd: 1, mask: uint32(Write), name: "config.yaml"}
	time.Sleep(10 * time.Millisecond)
	// ... while the application shuts down its config watcher.
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	for ev := range w.Events {
		fmt.Println("event:", ev.Name)
	}
	fmt.Println("watcher closed")
}
