// Project: vitessio/vitess (go/vt/vtgate/buffer)
// Bug: (reconstruction) Buffer.Shutdown held Buffer.mu while shutting down every
//      shardBuffer. shardBuffer.stopBufferingLocked, entered with sb.mu held,
//      temporarily released sb.mu while the buffered requests were retried (so they
//      could re-enter the buffer) and re-acquired it afterwards. In that window the
//      max-failover-duration timer took sb.mu and then needed Buffer.mu to record the
//      event -- held by Shutdown, which was itself waiting to re-lock sb.mu.
// Fix: Shutdown snapshots the shard buffers under Buffer.mu and shuts them down
//      after releasing it, so sb.mu is never dropped and retaken under Buffer.mu.

package vitessbuffer

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type bufferState string

const (
	stateIdle      bufferState = "IDLE"
	stateBuffering bufferState = "BUFFERING"
	stateDraining  bufferState = "DRAINING"
	stateShutdown  bufferState = "SHUTDOWN"
)

// RetryDoneFunc must be called by the client after it retried the request.
type RetryDoneFunc func()

type entry struct {
	done chan struct{}
	err  error
}

type Buffer struct {
	maxFailoverDuration time.Duration

	mu      sync.Mutex
	buffers map[string]*shardBuffer
	events  map[string][]string
	stopped bool
}

type shardBuffer struct {
	buf      *Buffer
	keyspace string
	shard    string

	mu        sync.Mutex
	state     bufferState
	queue     []*entry
	lastStart time.Time
	timer     *time.Timer
	retries   sync.WaitGroup
}

func New(maxFailoverDuration time.Duration) *Buffer {
	return &Buffer{maxFailoverDuration: maxFailoverDuration,
		buffers: make(map[string]*shardBuffer), events: make(map[string][]string)}
}

func (b *Buffer) getOrCreateBuffer(keyspace, shard string) *shardBuffer {
	key := keyspace + "/" + shard
	b.mu.Lock()
	defer b.mu.Unlock()
	sb, ok := b.buffers[key]
	if !ok {
		sb = &shardBuffer{buf: b, keyspace: keyspace, shard: shard, state: stateIdle}
		b.buffers[key] = sb
	}
	return sb
}

func (b *Buffer) recordEvent(keyspace, shard, event string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := keyspace + "/" + shard
	b.events[key] = append(b.events[key], event)
}

// WaitForFailoverEnd buffers the request if a failover is in progress for the shard.
func (b *Buffer) WaitForFailoverEnd(keyspace, shard string, err error) (RetryDoneFunc, error) {
	return b.getOrCreateBuffer(keyspace, shard).waitForFailoverEnd(err)
}

func (sb *shardBuffer) waitForFailoverEnd(err error) (RetryDoneFunc, error) {
	sb.mu.Lock()
	if sb.state == stateIdle && err != nil {
		sb.startBufferingLocked()
	}
	if sb.state != stateBuffering {
		sb.mu.Unlock()
		return nil, nil
	}
	e := &entry{done: make(chan struct{})}
	sb.queue = append(sb.queue, e)
	sb.retries.Add(1)
	sb.mu.Unlock()
	<-e.done
	return sb.retries.Done, e.err
}

func (sb *shardBuffer) startBufferingLocked() {
	sb.state = stateBuffering
	sb.lastStart = time.Now()
	sb.timer = time.AfterFunc(sb.buf.maxFailoverDuration, sb.stopBufferingDueToMaxDuration)
}

func (sb *shardBuffer) stopBufferingDueToMaxDuration() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.buf.recordEvent(sb.keyspace, sb.shard, "max failover duration exceeded")
	if sb.state != stateBuffering {
		return
	}
	sb.stopBufferingLocked(nil)
}

// stopBufferingLocked must be called with sb.mu held. It drops sb.mu while the
// buffered requests are retried and re-acquires it before returning.
func (sb *shardBuffer) stopBufferingLocked(err error) {
	sb.state = stateDraining
	q := sb.queue
	sb.queue = nil
	sb.mu.Unlock()
	sb.drain(q, err)
	sb.mu.Lock()
	if sb.state == stateDraining {
		sb.state = stateIdle
	}
}

func (sb *shardBuffer) drain(q []*entry, err error) {
	for _, e := range q {
		e.err = err
		close(e.done)
	}
	sb.retries.Wait()
}

func (sb *shardBuffer) shutdown() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.state == stateBuffering {
		sb.stopBufferingLocked(errors.New("vtgate buffer shutting down"))
	}
	sb.state = stateShutdown
}

func (b *Buffer) Shutdown() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	for _, sb := range b.buffers {
		sb.shutdown()
	}
}

func TestShutdownWhileMaxDurationFires(t *testing.T) {
	b := New(30 * time.Millisecond)
	primaryDown := errors.New("vttablet: rpc error: code = FailedPrecondition")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // client request hitting a failover
		defer wg.Done()
		retryDone, err := b.WaitForFailoverEnd("commerce", "-80", primaryDown)
		if retryDone != nil {
			time.Sleep(80 * time.Millisecond) // retry against the new primary
			retryDone()
		}
		_ = err
	}()
	go func() { // vtgate shutting down
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		b.Shutdown()
	}()
	wg.Wait()
	sb := b.getOrCreateBuffer("commerce", "-80")
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.state != stateShutdown {
		t.Fatalf("state = %s", sb.state)
	}
}
