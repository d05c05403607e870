// Project: cri-o/cri-o (internal/oci/container.go, internal/oci/runtime_oci.go)
// Issue: cri-o/cri-o#9256 "OCPBUGS-55485: Fix deadlock when stopping
// uninterruptible container" (backported, e.g. cri-o/cri-o#9331 for 1.29)
//
// Bug: the first StopContainer for a container marks it stopping and starts
// StopLoopForContainer; every StopContainer (the kubelet retries) then calls
// WaitOnStopTimeout, which takes c.stopLock (line 149) and, still holding
// it, sends its timeout on c.stopTimeoutChan (capacity 10, send at line 155)
// so the stop loop can shorten its deadline. The stop loop only reads that
// channel until it gives up on the stop signal and enters the SIGKILL loop.
// If the process sits in uninterruptible sleep (D state) the kill loop can
// run for a long time while the kubelet keeps retrying: ten retries fill the
// channel and the eleventh blocks in the send holding stopLock. When the
// process finally dies, the stop loop's deferred cleanup calls
// c.KillExecPIDs(), which needs c.stopLock (line 180): the stop loop never
// finishes, SetAsDoneStopping never closes the watchers, and every
// StopContainer for the pod hangs. The fix records that the kill loop has
// begun (under stopLock) and stops sending then, and makes the send
// non-blocking.
package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	stopProcessWatchSleep      = time.Millisecond
	stopProcessBlockedInterval = 10 * time.Second
)

var ErrNotFound = errors.New("container process not found")

// ---- the container's init process, as the kernel and runc see it ----

type initProcess struct {
	alive         atomic.Bool
	uninterrupted chan struct{} // closed when the D-state sleep ends
	killStarted   chan struct{} // closed on the first SIGKILL
	killOnce      sync.Once
}

func (p *initProcess) signal(sig string) {
	if sig != "KILL" {
		return // in uninterruptible sleep: SIGTERM is not acted upon
	}
	p.killOnce.Do(func() { close(p.killStarted) })
	select {
	case <-p.uninterrupted:
		p.alive.Store(false)
	default:
	}
}

// ---- k8s.io/apimachinery/pkg/util/wait (trimmed) ----

type BackoffManager interface {
	Backoff() <-chan time.Time
}

type fixedBackoff struct{ d time.Duration }

func (b fixedBackoff) Backoff() <-chan time.Time { return time.After(b.d) }

// BackoffUntil loops until stop channel is closed, run f every duration given by BackoffManager.
func BackoffUntil(f func(), backoff BackoffManager, sliding bool, stopCh <-chan struct{}) {
	for {
		select {
		case <-stopCh:
			return
		default:
		}
		f()
		select {
		case <-stopCh:
			return
		case <-backoff.Backoff():
		}
	}
}

// ---- internal/oci/container.go ----

// ContainerState represents the status of a container.
type ContainerState struct {
	Status   string
	Finished time.Time
}

// Container represents a runtime container.
type Container struct {
	id              string
	name            string
	state           *ContainerState
	opLock          sync.RWMutex
	proc            *initProcess
	stopping        bool
	stopTimeoutChan chan int64
	stopWatchers    []chan struct{}
	stopLock        sync.Mutex
	execPIDs        map[int]bool
}

func NewContainer(id, name string, proc *initProcess) *Container {
	return &Container{
		id:              id,
		name:            name,
		state:           &ContainerState{Status: "running"},
		proc:            proc,
		stopTimeoutChan: make(chan int64, 10),
		stopWatchers:    []chan struct{}{},
		execPIDs:        map[int]bool{},
	}
}

func (c *Container) ID() string   { return c.id }
func (c *Container) Name() string { return c.name }

func (c *Container) GetStopSignal() string { return "15" }

// Living checks if a container's init PID exists and it's running, without calling
// a given runtime directly to check the state, which is expensive.
func (c *Container) Living() error {
	if !c.proc.alive.Load() {
		return fmt.Errorf("checking if PID of %s is running failed: %w", c.id, ErrNotFound)
	}
	return nil
}

// SetAsStopping marks a container as being stopped.
// Returns true if the container was not set as stopping before, and false otherwise (i.e. on subsequent calls)."
func (c *Container) SetAsStopping() (setToStopping bool) {
	c.stopLock.Lock()
	defer c.stopLock.Unlock()
	if !c.stopping {
		c.stopping = true
		return true
	}
	return false
}

func (c *Container) WaitOnStopTimeout(ctx context.Context, timeout int64) {
	c.stopLock.Lock()
	if !c.stopping {
		c.stopLock.Unlock()
		return
	}

	c.stopTimeoutChan <- timeout

	watcher := make(chan struct{}, 1)
	c.stopWatchers = append(c.stopWatchers, watcher)
	c.stopLock.Unlock()

	select {
	case <-ctx.Done():
	case <-watcher:
	}
}

func (c *Container) SetAsDoneStopping() {
	c.stopLock.Lock()
	for _, watcher := range c.stopWatchers {
		close(watcher)
	}
	c.stopWatchers = make([]chan struct{}, 0)
	close(c.stopTimeoutChan)
	c.stopLock.Unlock()
}

// KillExecPIDs loops through the saved execPIDs and sends a signal to them.
// If shouldKill is true, the signal is SIGKILL. Otherwise, SIGINT.
func (c *Container) KillExecPIDs() {
	c.stopLock.Lock()
	toKill := c.execPIDs
	c.stopLock.Unlock()

	for len(toKill) != 0 {
		unkilled := map[int]bool{}
		toKill = unkilled
		time.Sleep(stopProcessWatchSleep)
	}
}

// ---- internal/oci/runtime_oci.go ----

type runtimeOCI struct {
	path string
}

// runtimeCmd executes a command with args and returns its output as a string along
// with an error, if any.
func (r *runtimeOCI) runtimeCmd(c *Container, args ...string) (string, error) {
	if args[0] == "kill" {
		if !c.proc.alive.Load() {
			return "", fmt.Errorf("`%s kill` failed: container not running: %w", r.path, ErrNotFound)
		}
		c.proc.signal(args[len(args)-1])
	}
	return "", nil
}

// StopContainer stops a container. Timeout is given in seconds.
func (r *runtimeOCI) StopContainer(ctx context.Context, c *Container, timeout int64) (retErr error) {
	// The initial container process either doesn't exist, or isn't ours.
	if err := c.Living(); err != nil {
		c.state.Finished = time.Now()
		return nil
	}

	if c.SetAsStopping() {
		go r.StopLoopForContainer(c, fixedBackoff{d: time.Millisecond})
	}

	c.WaitOnStopTimeout(ctx, timeout)
	return nil
}

func (r *runtimeOCI) StopLoopForContainer(c *Container, bm BackoffManager) {
	// (cri-o wraps this context in signal.NotifyContext(ctx, os.Interrupt).)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	c.opLock.Lock()
	defer func() {
		// Kill the exec PIDs after the main container to avoid pod lifecycle regressions:
		// Ref: https://github.com/kubernetes/kubernetes/issues/124743
		c.KillExecPIDs()
		c.state.Finished = time.Now()
		c.opLock.Unlock()
		c.SetAsDoneStopping()
	}()

	// Begin the actual kill.
	if _, err := r.runtimeCmd(c, "kill", c.ID(), c.GetStopSignal()); err != nil {
		if err := c.Living(); err != nil {
			// The initial container process either doesn't exist, or isn't ours.
			// Set state accordingly.
			c.state.Finished = time.Now()
			return
		}
	}

	done := make(chan struct{})
	go func() {
		statusCheckTicker := time.NewTicker(stopProcessWatchSleep)
		defer statusCheckTicker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-statusCheckTicker.C:
				// Periodically check if the container is still running.
				if err := c.Living(); err != nil {
					close(done)
					return
				}
			}
		}
	}()

	// Operate in terms of targetTime, so that we can pause in the middle of the operation
	// to catch a new timeout (and possibly ignore that new timeout if it's not correct to
	// take a new one).
	targetTime := time.Now().AddDate(+1, 0, 0) // A year from this one.

	for {
		select {
		case newTimeout := <-c.stopTimeoutChan:
			// If a new timeout comes in, interrupt the old one, and start a new one.
			newTargetTime := time.Now().Add(time.Duration(newTimeout) * time.Second)

			// But, only if it's an earlier one.
			if newTargetTime.Before(targetTime) {
				targetTime = newTargetTime
			}

		case <-time.After(time.Until(targetTime)):
			fmt.Printf("Stopping container %s with stop signal timed out. Killing...\n", c.ID())
			goto killContainer

		case <-done:
			stop()
			return
		case <-ctx.Done():
			return
		}
	}
killContainer:
	// We cannot use ExponentialBackoff() here as its stop conditions are not flexible enough.
	BackoffUntil(func() {
		if _, err := r.runtimeCmd(c, "kill", c.ID(), "KILL"); err != nil {
			if !errors.Is(err, ErrNotFound) {
				fmt.Printf("Killing container %v failed: %v\n", c.ID(), err)
			}
		}

		if err := c.Living(); err != nil {
			stop()
			return
		}
	}, bm, true, ctx.Done())
}

// waitForParked waits until n goroutines running fn are parked in one of the states.
func waitForParked(fn string, n int, states ...string) {
	buf := make([]byte, 1<<20)
	for {
		m := runtime.Stack(buf, true)
		cnt := 0
		for _, g := range strings.Split(string(buf[:m]), "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			if !strings.Contains(g, fn) {
				continue
			}
			for _, s := range states {
				if strings.Contains(header, "["+s) {
					cnt++
					break
				}
			}
		}
		if cnt >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func main() {
	proc := &initProcess{uninterrupted: make(chan struct{}), killStarted: make(chan struct{})}
	proc.alive.Store(true)
	c := NewContainer("4f2a9c1b", "k8s_app_web-0_default", proc)
	r := &runtimeOCI{path: "/usr/bin/runc"}

	var wg sync.WaitGroup
	stopContainer := func(timeout int64) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = r.StopContainer(context.Background(), c, timeout)
		}()
	}

	// kubelet: StopContainer with a 0s grace period; the process is stuck in
	// D state, so the stop loop escalates to SIGKILL.
	stopContainer(0)
	<-proc.killStarted

	// The kubelet keeps retrying StopContainer while the SIGKILL loop runs.
	const retries = 11
	for i := 0; i < retries; i++ {
		stopContainer(30)
	}
	waitForParked("WaitOnStopTimeout", retries+1, "select", "chan send")

	// The uninterruptible sleep ends and the process is finally killed.
	close(proc.uninterrupted)

	wg.Wait()
	fmt.Printf("container %s stopped at %s\n", c.Name(), c.state.Finished.Format(time.RFC3339))
}
