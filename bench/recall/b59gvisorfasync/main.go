// Project: google/gvisor
// Version: mid 2019 (before the regMu fix)
// Files/functions: pkg/sentry/kernel/fasync/fasync.go: FileAsync.Callback,
// Register, Unregister; pkg/waiter/waiter.go: Queue.Notify,
// Queue.EventUnregister; pkg/sentry/fs/file.go: File.DecRef, File.EventUnregister;
// pkg/sentry/socket/unix (SocketOperations) and unix/transport (baseEndpoint
// embeds *waiter.Queue, connectionedEndpoint.SendMsg).
// Issue: google/gvisor #346 "fasync.go: async and waiter.go: q deadlock",
// fixed by the follow-up change that added FileAsync.regMu.
//
// A file with O_ASYNC set has a FileAsync registered as a waiter.Entry on the
// file's waiter.Queue. When the peer of a unix socket writes, the receiving
// endpoint's Queue.Notify runs the entry callbacks while holding q.mu for
// reading, and FileAsync.Callback takes a.mu to find the signal recipient.
// Concurrently the application closes the file: the last File.DecRef calls
// FileAsync.Unregister, which held a.mu (deferred unlock) while calling
// w.EventUnregister; that goes through File.EventUnregister and
// SocketOperations.EventUnregister to the endpoint's embedded
// waiter.Queue.EventUnregister, which locks q.mu for writing. Notify holds
// q.mu and waits for a.mu, Unregister holds a.mu and waits for q.mu.
// The fix adds regMu to serialize Register/Unregister and holds a.mu only around
// the registered flag, so it is released before EventRegister/EventUnregister.
package main

import (
	"fmt"
	"sync"
	"time"
)

type EventMask uint64

const (
	EventIn  EventMask = 0x01
	EventHUp EventMask = 0x10
)

type EntryCallback interface{ Callback(e *Entry) }

type Entry struct {
	Callback EntryCallback
	mask     EventMask
}

type Waitable interface {
	EventRegister(e *Entry, mask EventMask)
	EventUnregister(e *Entry)
}

type Queue struct {
	list []*Entry
	mu   sync.RWMutex
}

func (q *Queue) EventRegister(e *Entry, mask EventMask) {
	q.mu.Lock()
	e.mask = mask
	q.list = append(q.list, e)
	q.mu.Unlock()
}

func (q *Queue) EventUnregister(e *Entry) {
	q.mu.Lock()
	for i, x := range q.list {
		if x == e {
			q.list = append(q.list[:i], q.list[i+1:]...)
			break
		}
	}
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

type FileAsync struct {
	mu         sync.Mutex
	e          Entry
	registered bool
	recipient  string
}

func (a *FileAsync) Callback(e *Entry) {
	// The file descriptor is being closed at this moment.
	time.Sleep(50 * time.Millisecond)
	a.mu.Lock()
	if !a.registered {
		a.mu.Unlock()
		return
	}
	fmt.Println("SIGIO to", a.recipient)
	a.mu.Unlock()
}

func (a *FileAsync) Register(w Waitable) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.registered {
		panic("registering already registered file")
	}
	a.e.Callback = a
	w.EventRegister(&a.e, EventIn|EventHUp)
	a.registered = true
}

func (a *FileAsync) Unregister(w Waitable) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.registered {
		panic("unregistering unregistered file")
	}
	w.EventUnregister(&a.e)
	a.registered = false
}

type baseEndpoint struct {
	*Queue
	mu sync.Mutex
}

type connectionedEndpoint struct {
	baseEndpoint
	connected *connectionedEndpoint
}

func (e *connectionedEndpoint) SendMsg(data []byte) {
	e.connected.Notify(EventIn)
}

type SocketOperations struct{ ep *connectionedEndpoint }

func (s *SocketOperations) EventRegister(e *Entry, mask EventMask) { s.ep.EventRegister(e, mask) }
func (s *SocketOperations) EventUnregister(e *Entry)               { s.ep.EventUnregister(e) }
func (s *SocketOperations) Write(data []byte)                      { s.ep.SendMsg(data) }

type FileAsyncer interface {
	Register(w Waitable)
	Unregister(w Waitable)
}

type File struct {
	refs           int64
	flagsMu        sync.Mutex
	asyncFlag      bool
	async          FileAsyncer
	FileOperations *SocketOperations
}

func (f *File) EventRegister(e *Entry, mask EventMask) { f.FileOperations.EventRegister(e, mask) }
func (f *File) EventUnregister(e *Entry)               { f.FileOperations.EventUnregister(e) }

func (f *File) DecRef() {
	f.refs--
	if f.refs > 0 {
		return
	}
	f.flagsMu.Lock()
	if f.asyncFlag && f.async != nil {
		f.async.Unregister(f)
	}
	f.flagsMu.Unlock()
}

func main() {
	a := &connectionedEndpoint{baseEndpoint: baseEndpoint{Queue: &Queue{}}}
	b := &connectionedEndpoint{baseEndpoint: baseEndpoint{Queue: &Queue{}}}
	a.connected, b.connected = b, a
	fileA := &File{refs: 1, FileOperations: &SocketOperations{ep: a}}
	fileB := &File{refs: 1, FileOperations: &SocketOperations{ep: b}}

	// fcntl(F_SETFL, O_ASYNC) on fileA.
	fileA.asyncFlag, fileA.async = true, &FileAsync{recipient: "thread group 1"}
	fileA.async.Register(fileA)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // peer writes to the socket pair
		defer wg.Done()
		fileB.FileOperations.Write([]byte("ping"))
	}()
	go func() { // close(2) on fileA
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		fileA.DecRef()
	}()
	wg.Wait()
}
