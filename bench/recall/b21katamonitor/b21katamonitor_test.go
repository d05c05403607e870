// Project: kata-containers (src/runtime/virtcontainers/monitor.go)
// Bug: monitor.stop() takes m.Lock() and then blocks in m.wg.Wait() for the
// watcher goroutine, but that goroutine may be inside watchAgent() -> notify(),
// which needs m.Lock() to report the dead agent, so stop() never returns.
// Fix: wait for the watcher goroutine outside of the monitor lock
// ("defer m.wg.Wait()" placed before m.Lock()).

package b21katamonitor

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

const defaultCheckInterval = 20 * time.Millisecond

var errAgentDead = errors.New("agent is dead")

type agent interface {
	check() error
	disconnect() error
}

type sandbox struct {
	id    string
	agent agent
	state string
}

type monitor struct {
	sync.Mutex

	sandbox       *sandbox
	checkInterval time.Duration
	watchers      []chan error
	wg            sync.WaitGroup
	running       bool
	stopCh        chan bool
}

func newMonitor(s *sandbox) *monitor {
	return &monitor{
		sandbox:       s,
		checkInterval: defaultCheckInterval,
		stopCh:        make(chan bool, 1),
	}
}

func (m *monitor) newWatcher() (chan error, error) {
	m.Lock()
	defer m.Unlock()

	watcher := make(chan error, 1)
	m.watchers = append(m.watchers, watcher)

	if !m.running {
		m.running = true
		m.wg.Add(1)

		go func() {
			tick := time.NewTicker(m.checkInterval)
			defer tick.Stop()
			for {
				select {
				case <-m.stopCh:
					m.wg.Done()
					return
				case <-tick.C:
					m.watchAgent()
				}
			}
		}()
	}

	return watcher, nil
}

func (m *monitor) notify(err error) {
	m.Lock()
	defer m.Unlock()

	if !m.running {
		return
	}

	for _, c := range m.watchers {
		select {
		case c <- err:
		default:
		}
	}
}

func (m *monitor) stop() {
	m.Lock()
	defer m.Unlock()

	if !m.running {
		return
	}

	// send one and only one stop signal to the monitor go routine
	m.stopCh <- true
	m.wg.Wait()
	m.running = false

	// and close the watchers
	for _, c := range m.watchers {
		close(c)
	}
	m.watchers = nil
}

func (m *monitor) watchAgent() {
	if err := m.sandbox.agent.check(); err != nil {
		m.notify(fmt.Errorf("sandbox %s: %w", m.sandbox.id, err))
	}
}

// slowAgent models a kata-agent whose health check RPC hangs until its
// timeout fires and then reports the agent as dead.
type slowAgent struct {
	timeout time.Duration
}

func (a *slowAgent) check() error {
	time.Sleep(a.timeout)
	return errAgentDead
}

func (a *slowAgent) disconnect() error { return nil }

func TestMonitorStopWhileAgentCheckInFlight(t *testing.T) {
	s := &sandbox{id: "sb-1", agent: &slowAgent{timeout: 150 * time.Millisecond}, state: "running"}
	m := newMonitor(s)

	if _, err := m.newWatcher(); err != nil {
		t.Fatal(err)
	}

	// Let the first tick start an agent check, then stop the sandbox.
	time.Sleep(60 * time.Millisecond)

	done := make(chan struct{})
	go func() {
		m.stop()
		close(done)
	}()
	<-done
}
