// Project: google/gvisor (pkg/sentry/fsimpl/devpts/line_discipline.go lineDiscipline.setTermios and replicaReadiness, pkg/sentry/fsimpl/devpts/replica.go, pkg/sentry/vfs/epoll.go EpollInstance.ReadEvents and epollInterest.NotifyEvent), VFS2 devpts, about 2021 (approximate; the fix that unlocks termiosMu before notifying came later and its PR number is not known to me).
// Bug: setTermios (TCSETS on the pty) holds the line discipline's termiosMu write lock, deferred, and when ICANON is switched off it notifies the replica waiters, whose epoll interest takes the epoll instance's mu; epoll_wait holds that same ep.mu in ReadEvents while it asks the replica file for Readiness, which read-locks termiosMu. A tcsetattr racing with an epoll_wait on the replica deadlocks; the fix releases termiosMu before replicaWaiter.Notify.
package main

import (
	"fmt"
	"sync"
	"time"
)

type EventMask uint64

const (
	ReadableEvents EventMask = 0x01
	WritableEvents EventMask = 0x04
)

// waiter.EventListener, waiter.Entry and waiter.Queue.
type EventListener interface{ NotifyEvent(mask EventMask) }

type Entry struct {
	eventListener EventListener
	mask          EventMask
}

type Queue struct {
	mu   sync.RWMutex
	list []*Entry
}

func (q *Queue) EventRegister(e *Entry) {
	q.mu.Lock()
	q.list = append(q.list, e)
	q.mu.Unlock()
}

func (q *Queue) Notify(mask EventMask) {
	q.mu.RLock()
	for _, e := range q.list {
		if m := mask & e.mask; m != 0 {
			e.eventListener.NotifyEvent(m)
		}
	}
	q.mu.RUnlock()
}

// vfs.FileDescriptionImpl, the part epoll uses.
type FileDescriptionImpl interface {
	Readiness(mask EventMask) EventMask
	EventRegister(e *Entry)
}

type epollInterest struct {
	epoll  *EpollInstance
	file   FileDescriptionImpl // key.file
	waiter Entry
	mask   EventMask
	ready  bool
}

// vfs.EpollInstance.
type EpollInstance struct {
	q          Queue
	interestMu sync.Mutex
	interest   map[FileDescriptionImpl]*epollInterest

	// mu protects ready and epollInterest.ready.
	mu    sync.Mutex
	ready []*epollInterest
}

// NotifyEvent implements waiter.EventListener.NotifyEvent.
func (epi *epollInterest) NotifyEvent(EventMask) {
	newReady := false
	epi.epoll.mu.Lock()
	if !epi.ready {
		newReady = true
		epi.ready = true
		epi.epoll.ready = append(epi.epoll.ready, epi)
	}
	epi.epoll.mu.Unlock()
	if newReady {
		epi.epoll.q.Notify(ReadableEvents)
	}
}

// AddInterest implements epoll_ctl(EPOLL_CTL_ADD).
func (ep *EpollInstance) AddInterest(file FileDescriptionImpl, mask EventMask) {
	ep.interestMu.Lock()
	defer ep.interestMu.Unlock()
	epi := &epollInterest{epoll: ep, file: file, mask: mask}
	ep.interest[file] = epi
	epi.waiter = Entry{eventListener: epi, mask: mask}
	file.EventRegister(&epi.waiter)
	if file.Readiness(mask)&mask != 0 {
		epi.NotifyEvent(mask)
	}
}

// ReadEvents returns up to maxEvents ready events.
func (ep *EpollInstance) ReadEvents(maxEvents int) (events []EventMask) {
	ep.mu.Lock()
	var requeue []*epollInterest
	for _, epi := range ep.ready {
		ievents := epi.file.Readiness(epi.mask) & epi.mask
		if ievents == 0 {
			epi.ready = false
			continue
		}
		requeue = append(requeue, epi)
		if events = append(events, ievents); len(events) == maxEvents {
			break
		}
	}
	ep.ready = requeue
	ep.mu.Unlock()
	return events
}

// hostFD is a host-backed fd (fsimpl/host); Readiness polls the host.
type hostFD struct {
	Queue
	fd int
}

func (h *hostFD) Readiness(mask EventMask) EventMask {
	time.Sleep(100 * time.Millisecond) // fdnotifier.NonBlockingPoll(h.fd, mask)
	return mask & WritableEvents
}

// ---- pkg/sentry/fsimpl/devpts ----

const ICANON = 0x2

type KernelTermios struct{ LocalFlags uint32 }

func (t *KernelTermios) LEnabled(flag uint32) bool { return t.LocalFlags&flag == flag }

type queue struct {
	mu       sync.Mutex
	readBuf  []byte
	waitBuf  []byte
	readable bool
}

func (q *queue) readReadiness(t *KernelTermios) EventMask {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.readBuf) > 0 && q.readable {
		return ReadableEvents
	}
	return 0
}

// lineDiscipline. Lock order: termiosMu, inQueue.mu, outQueue.mu.
type lineDiscipline struct {
	inQueue       queue
	outQueue      queue
	termiosMu     sync.RWMutex
	termios       KernelTermios
	masterWaiter  Queue
	replicaWaiter Queue
}

// setTermios sets a linux.Termios for the tty.
func (l *lineDiscipline) setTermios(t KernelTermios) error {
	l.termiosMu.Lock()
	oldCanonEnabled := l.termios.LEnabled(ICANON)
	l.termios = t

	// If canonical mode is turned off, move bytes from inQueue's wait
	// buffer to its read buffer. Anything already in the read buffer is
	// now readable.
	if oldCanonEnabled && !l.termios.LEnabled(ICANON) {
		l.inQueue.mu.Lock()
		l.inQueue.readBuf = append(l.inQueue.readBuf, l.inQueue.waitBuf...) // pushWaitBufLocked
		l.inQueue.waitBuf = nil
		l.inQueue.readable = true
		l.inQueue.mu.Unlock()
		l.termiosMu.Unlock()
		l.replicaWaiter.Notify(ReadableEvents)
	} else {
		l.termiosMu.Unlock()
	}
	return nil
}

func (l *lineDiscipline) replicaReadiness() EventMask {
	l.termiosMu.RLock()
	defer l.termiosMu.RUnlock()
	return WritableEvents | l.inQueue.readReadiness(&l.termios) // outQueue.writeReadiness | ...
}

type Terminal struct{ ld *lineDiscipline }

type replicaFileDescription struct{ t *Terminal } // inode.t

func (rfd *replicaFileDescription) Readiness(mask EventMask) EventMask {
	return rfd.t.ld.replicaReadiness() & mask
}

func (rfd *replicaFileDescription) EventRegister(e *Entry) { rfd.t.ld.replicaWaiter.EventRegister(e) }

type masterFileDescription struct{ t *Terminal }

const TCSETS = 0x5402

// Ioctl implements vfs.FileDescriptionImpl.Ioctl for the master end.
func (mfd *masterFileDescription) Ioctl(cmd uint32, termios KernelTermios) error {
	if cmd == TCSETS {
		return mfd.t.ld.setTermios(termios)
	}
	return nil
}

func main() {
	ld := &lineDiscipline{termios: KernelTermios{LocalFlags: ICANON}}
	ld.inQueue.waitBuf = []byte("partial line")
	term := &Terminal{ld: ld}
	master := &masterFileDescription{t: term}

	// The shell inside the sandbox watches its host stdout and the pty replica.
	ep := &EpollInstance{interest: map[FileDescriptionImpl]*epollInterest{}}
	ep.AddInterest(&hostFD{fd: 1}, WritableEvents)
	ep.AddInterest(&replicaFileDescription{t: term}, ReadableEvents|WritableEvents)

	done := make(chan struct{}, 2)
	go func() {
		fmt.Println("epoll_wait:", ep.ReadEvents(16))
		done <- struct{}{}
	}()
	time.Sleep(20 * time.Millisecond)
	go func() { // the terminal emulator on the master side switches to raw mode
		fmt.Println("tcsetattr:", master.Ioctl(TCSETS, KernelTermios{}))
		done <- struct{}{}
	}()
	<-done
	<-done
	fmt.Println("ok")
}
