// Project: cockroachdb/cockroach (rpc/context_test.go TestOffsetMeasurement and its AdvancingClock, util/hlc/hlc.go Clock, rpc/context.go heartbeat loop, rpc/clock_offset.go RemoteClockMonitor), April 2016 (issue #6024, fixed by PR #6264 "rpc: Fix deadlock in TestOffsetMeasurement"; code shape approximate).
// Bug: the test changed the client AdvancingClock's advancement interval while holding the AdvancingClock mutex and computed the new value from clientClock.MaxOffset(), which takes the hlc.Clock mutex, while the RPC heartbeat reads the local clock through hlc.Clock.PhysicalNow, which holds the hlc.Clock mutex while it calls the physical clock callback AdvancingClock.UnixNano, which takes the AdvancingClock mutex. The test goroutine and the heartbeat goroutine deadlock AB-BA; the fix made advancementInterval an atomic.Value so no AdvancingClock lock is held across MaxOffset.
package b98crdbadvancingclock

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ---- util/hlc ----

type Timestamp struct {
	WallTime int64
	Logical  int32
}

// Clock is the hybrid logical clock. physicalClock is a callback supplied by
// the creator (time.Now().UnixNano in production, a manual clock in tests).
type Clock struct {
	physicalClock func() int64
	mu            struct {
		sync.Mutex
		state     Timestamp
		maxOffset time.Duration
	}
}

func NewClock(physicalClock func() int64) *Clock {
	return &Clock{physicalClock: physicalClock}
}

func (c *Clock) SetMaxOffset(delta time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.maxOffset = delta
}

func (c *Clock) MaxOffset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.maxOffset
}

// getPhysicalClockLocked must be called with c.mu held.
func (c *Clock) getPhysicalClockLocked() int64 {
	return c.physicalClock()
}

func (c *Clock) PhysicalNow() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getPhysicalClockLocked()
}

func (c *Clock) Now() Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	if physical := c.getPhysicalClockLocked(); c.mu.state.WallTime >= physical {
		c.mu.state.Logical++
	} else {
		c.mu.state = Timestamp{WallTime: physical}
	}
	return c.mu.state
}

// ---- rpc ----

const maximumPingDurationMult = 2

type RemoteOffset struct {
	Offset      int64
	Uncertainty int64
	MeasuredAt  int64
}

type RemoteClockMonitor struct {
	clock *Clock
	mu    struct {
		sync.Mutex
		offsets map[string]RemoteOffset
	}
}

func newRemoteClockMonitor(clock *Clock) *RemoteClockMonitor {
	r := &RemoteClockMonitor{clock: clock}
	r.mu.offsets = make(map[string]RemoteOffset)
	return r
}

func (r *RemoteClockMonitor) UpdateOffset(addr string, offset RemoteOffset) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.offsets[addr] = offset
}

func (r *RemoteClockMonitor) Offsets() map[string]RemoteOffset {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]RemoteOffset, len(r.mu.offsets))
	for k, v := range r.mu.offsets {
		out[k] = v
	}
	return out
}

type PingRequest struct{ ClientTime int64 }
type PingResponse struct{ ServerTime int64 }

type HeartbeatService struct{ clock *Clock }

func (hs *HeartbeatService) Ping(args PingRequest) PingResponse {
	return PingResponse{ServerTime: hs.clock.PhysicalNow()}
}

type Context struct {
	localClock   *Clock
	RemoteClocks *RemoteClockMonitor
}

func NewContext(clock *Clock) *Context {
	return &Context{localClock: clock, RemoteClocks: newRemoteClockMonitor(clock)}
}

// heartbeat performs one round of the heartbeat loop against remote.
func (ctx *Context) heartbeat(addr string, remote *HeartbeatService) {
	sendTime := ctx.localClock.PhysicalNow()
	response := remote.Ping(PingRequest{ClientTime: sendTime})
	receiveTime := ctx.localClock.PhysicalNow()
	var offset RemoteOffset
	if pingDuration := receiveTime - sendTime; pingDuration <= maximumPingDurationMult*ctx.localClock.MaxOffset().Nanoseconds() {
		offset.Uncertainty = pingDuration / 2
		offset.Offset = response.ServerTime - (sendTime + offset.Uncertainty)
	}
	offset.MeasuredAt = receiveTime
	ctx.RemoteClocks.UpdateOffset(addr, offset)
}

// ---- rpc/context_test.go ----

// AdvancingClock is a clock that advances by a fixed interval each time it is read.
type AdvancingClock struct {
	sync.Mutex
	time                time.Time
	advancementInterval time.Duration
}

func (ac *AdvancingClock) UnixNano() int64 {
	ac.Lock()
	t := ac.time
	ac.time = t.Add(ac.advancementInterval)
	ac.Unlock()
	return t.UnixNano()
}

func TestB98crdbadvancingclock(t *testing.T) {
	serverAdvancing := &AdvancingClock{time: time.Unix(0, 10)}
	serverClock := NewClock(serverAdvancing.UnixNano)
	serverClock.SetMaxOffset(20 * time.Nanosecond)
	hs := &HeartbeatService{clock: serverClock}

	// The client physical clock is clientAdvancing.UnixNano; the wrapper only
	// parks the first read so the test can take its step at the bad moment.
	clientAdvancing := &AdvancingClock{time: time.Unix(0, 10)}
	inClock, proceed := make(chan struct{}), make(chan struct{})
	var parked atomic.Bool
	clientClock := NewClock(func() int64 {
		if parked.CompareAndSwap(false, true) {
			close(inClock)
			<-proceed
		}
		return clientAdvancing.UnixNano()
	})
	clientClock.SetMaxOffset(20 * time.Nanosecond)
	rpcCtx := NewContext(clientClock)

	done := make(chan struct{})
	go func() {
		defer close(done)
		rpcCtx.heartbeat("server", hs)
	}()

	// Make the client's pings look too slow from now on.
	clientAdvancing.Lock()
	<-inClock // the heartbeat holds clientClock.mu and is reading the physical clock
	close(proceed)
	clientAdvancing.advancementInterval = maximumPingDurationMult * clientClock.MaxOffset()
	clientAdvancing.Unlock()

	<-done
	if _, ok := rpcCtx.RemoteClocks.Offsets()["server"]; !ok {
		t.Fatalf("no offset measured for server")
	}
}
