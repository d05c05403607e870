// Project: cilium/cilium (daemon/endpoint.go deleteEndpointQuiet; pkg/eventqueue/eventqueue.go;
// pkg/endpoint/events.go EndpointRevisionBumpEvent; pkg/endpoint/lock.go; pkg/endpoint/policy.go)
// Issue: cilium/cilium#8678 "Deadlock in endpoint event queue"; fixed by cilium/cilium#8687
// "endpoint: fix deadlock when endpoint EventQueue is full" (v1.6 cycle, 2019).
//
// Bug: deleteEndpointQuiet takes the endpoint's write lock (ep.UnconditionalLock, line 297)
// and, still holding it, stops the endpoint's EventQueue (ep.EventQueue.Stop, line 313).
// EventQueue.Stop waits on closeWaitGroup for every Enqueue that is still in flight
// (line 150) before it closes the events channel. Meanwhile the queue's consumer goroutine
// (EventQueue.Run) is handling an EndpointRevisionBumpEvent: Handle -> SetPolicyRevision ->
// LockAlive takes the same endpoint lock (line 205) and blocks behind deleteEndpointQuiet.
// Because the consumer is stuck, the buffered events channel stays full and a concurrent
// Enqueue (from PolicyRevisionBumpEvent) stays blocked in `q.events <- ev` (line 107) with
// closeWaitGroup incremented, so Stop's Wait never returns and the endpoint lock is never
// released: delete waits for the Enqueue, the Enqueue waits for the consumer, the consumer
// waits for the endpoint lock held by delete.
//
// Fix (#8687): stop the EventQueue and wait for it to be drained *before* taking the endpoint
// lock in deleteEndpointQuiet, so an in-flight event that needs the endpoint lock can finish.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---------------------------------------------------------------------------
// pkg/eventqueue
// ---------------------------------------------------------------------------

// EventQueue is a structure which is utilized to handle Events in a first-in,
// first-out order.
type EventQueue struct {
	// events represents the queue of events. This should always be a buffered
	// channel.
	events chan *Event

	// close is closed once the EventQueue has been closed.
	close chan struct{}

	// drain is closed when the EventQueue is stopped. Any Event which is
	// Enqueued after this channel is closed will be cancelled / not processed
	// by the queue.
	drain chan struct{}

	// eventQueueOnce is used to ensure that the EventQueue business logic can
	// only be ran once.
	eventQueueOnce sync.Once

	// closeOnce is used to ensure that the EventQueue can only be closed once.
	closeOnce sync.Once

	// closeWaitGroup ensures that the events channel is not closed while a
	// call to Enqueue is in flight.
	closeWaitGroup sync.WaitGroup

	name string
}

// NewEventQueueBuffered returns an EventQueue with a capacity of
// numBufferedEvents at a time.
func NewEventQueueBuffered(name string, numBufferedEvents int) *EventQueue {
	return &EventQueue{
		name:   name,
		events: make(chan *Event, numBufferedEvents),
		close:  make(chan struct{}),
		drain:  make(chan struct{}),
	}
}

// Event is an event that can be enqueued onto an EventQueue.
type Event struct {
	Metadata     EventHandler
	eventResults chan interface{}
	cancelled    chan struct{}
}

// NewEvent returns an Event with all fields initialized.
func NewEvent(meta EventHandler) *Event {
	return &Event{
		Metadata:     meta,
		eventResults: make(chan interface{}, 1),
		cancelled:    make(chan struct{}),
	}
}

// Enqueue pushes the given event onto the EventQueue. This function may block
// if the queue is at its capacity for events.
func (q *EventQueue) Enqueue(ev *Event) <-chan interface{} {
	if q.notSafeToAccess() || ev == nil {
		return nil
	}

	// Track that event has been Enqueued.
	q.closeWaitGroup.Add(1)
	defer q.closeWaitGroup.Done()

	select {
	case <-q.drain:
		// Closed eventResults channel signifies cancellation.
		close(ev.cancelled)
		close(ev.eventResults)
		return ev.eventResults
	default:
		q.events <- ev
		return ev.eventResults
	}
}

// Run consumes events that have been queued for this EventQueue.
func (q *EventQueue) Run() {
	if q.notSafeToAccess() {
		return
	}

	go q.eventQueueOnce.Do(func() {
		for ev := range q.events {
			select {
			case <-q.drain:
				close(ev.cancelled)
				close(ev.eventResults)
			default:
				ev.Metadata.Handle(ev.eventResults)
				// Ensures that no more results can be sent as the event has
				// already been processed.
				close(ev.eventResults)
			}
		}
	})
}

func (q *EventQueue) notSafeToAccess() bool {
	return q == nil || q.close == nil || q.drain == nil || q.events == nil
}

// Stop stops any further events from being processed by the EventQueue.
func (q *EventQueue) Stop() {
	if q.notSafeToAccess() {
		return
	}

	q.closeOnce.Do(func() {
		// Any event that is sent to the queue at this point will be cancelled
		// immediately in Enqueue().
		close(q.drain)

		// Wait for all in-flight Enqueues before closing the events channel.
		q.closeWaitGroup.Wait()
		close(q.events)

		// Signal that the queue has been drained.
		close(q.close)
	})
}

// WaitToBeDrained waits for the EventQueue to have been stopped.
func (q *EventQueue) WaitToBeDrained() {
	if q == nil {
		return
	}
	<-q.close
}

// EventHandler is an interface for allowing an EventQueue to handle events
// in a generic way.
type EventHandler interface {
	Handle(chan interface{})
}

// ---------------------------------------------------------------------------
// pkg/endpoint
// ---------------------------------------------------------------------------

const (
	StateReady         = "ready"
	StateDisconnecting = "disconnecting"
	StateDisconnected  = "disconnected"
)

var ErrNotAlive = errors.New("rlock failed: endpoint is in the process of being removed")

type Endpoint struct {
	ID uint16

	// mutex protects write operations to this endpoint structure
	mutex sync.RWMutex

	state          string
	policyRevision uint64

	// EventQueue is the queue for events which are processed for this endpoint.
	EventQueue *EventQueue
}

func NewEndpoint(id uint16) *Endpoint {
	e := &Endpoint{ID: id, state: StateReady}
	e.EventQueue = NewEventQueueBuffered(fmt.Sprintf("endpoint-%d", id), 1)
	return e
}

// LockAlive returns error if endpoint was removed, locks underlying mutex otherwise
func (e *Endpoint) LockAlive() error {
	e.mutex.Lock()
	if e.IsDisconnecting() {
		e.mutex.Unlock()
		return ErrNotAlive
	}
	return nil
}

// Unlock unlocks endpoint mutex
func (e *Endpoint) Unlock() {
	e.mutex.Unlock()
}

// UnconditionalLock should be used only for locking endpoint for
// - setting its state to StateDisconnected
// - handling regular Lock errors
// - reporting endpoint status (like in LogStatus method)
func (e *Endpoint) UnconditionalLock() {
	e.mutex.Lock()
}

func (e *Endpoint) IsDisconnecting() bool {
	return e.state == StateDisconnected || e.state == StateDisconnecting
}

func (e *Endpoint) GetStateLocked() string { return e.state }

func (e *Endpoint) SetStateLocked(toState, reason string) bool {
	e.state = toState
	return true
}

func (e *Endpoint) setPolicyRevision(rev uint64) {
	if rev > e.policyRevision {
		e.policyRevision = rev
	}
}

// SetPolicyRevision sets the endpoint's policy revision with the given revision.
func (e *Endpoint) SetPolicyRevision(rev uint64) {
	if err := e.LockAlive(); err != nil {
		return
	}
	e.setPolicyRevision(rev)
	e.Unlock()
}

// EndpointRevisionBumpEvent contains all fields necessary to bump the policy
// revision of a given endpoint.
type EndpointRevisionBumpEvent struct {
	Rev uint64
	ep  *Endpoint
}

// Handle handles the revision bump event for the Endpoint.
func (ev *EndpointRevisionBumpEvent) Handle(res chan interface{}) {
	ev.ep.SetPolicyRevision(ev.Rev)
	res <- struct{}{}
}

// PolicyRevisionBumpEvent queues an event for the given endpoint to set its
// realized policy revision to rev. This may block depending on if events have
// been queued up for the given endpoint.
func (e *Endpoint) PolicyRevisionBumpEvent(rev uint64) {
	epBumpEvent := NewEvent(&EndpointRevisionBumpEvent{Rev: rev, ep: e})
	resChan := e.EventQueue.Enqueue(epBumpEvent)
	if testHookEnqueued != nil {
		testHookEnqueued(rev)
	}
	// Wait for the event to be processed (ok) or cancelled (!ok).
	if _, ok := <-resChan; !ok {
		_ = "Dropped endpoint revision bump"
	}
}

// ---------------------------------------------------------------------------
// daemon
// ---------------------------------------------------------------------------

type Daemon struct{}

// testHookDeleteLocked runs in deleteEndpointQuiet right after the endpoint lock
// is taken; the test driver uses it to line up the concurrent revision bumps.
var testHookDeleteLocked func(ep *Endpoint)

// testHookEnqueued is called by PolicyRevisionBumpEvent once Enqueue returned.
var testHookEnqueued func(rev uint64)

func (d *Daemon) deleteEndpointQuiet(ep *Endpoint) []error {
	errs := []error{}

	// Lock out any other writers to the endpoint
	ep.UnconditionalLock()

	if testHookDeleteLocked != nil {
		testHookDeleteLocked(ep)
	}

	// In case multiple delete requests have been enqueued, have all of them
	// except the first return here.
	if ep.GetStateLocked() == StateDisconnected {
		ep.Unlock()
		return []error{}
	}
	ep.SetStateLocked(StateDisconnecting, "Deleting endpoint")

	// Stop the endpoint's EventQueue to prevent further events from being
	// processed.
	ep.EventQueue.Stop()

	// ... remove from endpointmanager, clean up BPF maps, proxy state, etc. ...

	ep.SetStateLocked(StateDisconnected, "Endpoint removed")
	ep.Unlock()
	return errs
}

// ---------------------------------------------------------------------------
// test driver
// ---------------------------------------------------------------------------

func main() {
	d := &Daemon{}
	ep := NewEndpoint(1)
	ep.EventQueue.Run()

	var bumpers sync.WaitGroup
	enqueued := make(chan uint64, 3)
	testHookEnqueued = func(rev uint64) { enqueued <- rev }

	bump := func(rev uint64) {
		bumpers.Add(1)
		go func() {
			defer bumpers.Done()
			ep.PolicyRevisionBumpEvent(rev)
		}()
	}

	// While deleteEndpointQuiet holds the endpoint lock, policy revision bumps
	// arrive for the endpoint: the first one is picked up by the consumer (which
	// then needs the endpoint lock), the second fills the 1-slot buffer and the
	// third blocks inside Enqueue.
	testHookDeleteLocked = func(ep *Endpoint) {
		bump(1)
		<-enqueued
		for len(ep.EventQueue.events) != 0 {
			time.Sleep(time.Millisecond) // consumer has dequeued rev 1
		}
		bump(2)
		<-enqueued // rev 2 now sits in the buffer
		bump(3)
		time.Sleep(20 * time.Millisecond) // rev 3 is inside Enqueue
	}

	errs := d.deleteEndpointQuiet(ep)
	bumpers.Wait()
	fmt.Println("endpoint deleted, errors:", len(errs), "revision:", ep.policyRevision)
}
