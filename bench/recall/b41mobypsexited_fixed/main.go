// Project: moby/moby (Docker 1.3.x), files daemon/list.go, daemon/state.go,
// daemon/container.go.
// Issue: moby/moby#8909 ("docker ps --filter exited=N" hangs the daemon),
// fixed by PR moby/moby#8929 "Fix deadlock in ps exited filter".
//
// PR #7775 merged the Container and State mutexes: Container embeds *State,
// and State embeds sync.Mutex, so container.Lock() is the promoted
// State.Lock(). Daemon.Containers builds the `docker ps` listing with a
// writeCont closure that takes container.Lock() (line 137) for the whole
// entry. With an "exited" filter it compares the wanted codes against
// container.GetExitCode(), a State method that locks the very same embedded
// mutex again (line 48). sync.Mutex is not reentrant, so the API
// goroutine blocks on itself and every later request touching that
// container hangs. The fix reads container.ExitCode directly, since the lock
// is already held.
package main

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"
)

// State mirrors daemon/state.go after #7775.
type State struct {
	sync.Mutex
	Running    bool
	Paused     bool
	Pid        int
	ExitCode   int
	StartedAt  time.Time
	FinishedAt time.Time
}

func NewState() *State { return &State{} }

func (s *State) IsRunning() bool {
	s.Lock()
	res := s.Running
	s.Unlock()
	return res
}

func (s *State) GetExitCode() int {
	s.Lock()
	res := s.ExitCode
	s.Unlock()
	return res
}

func (s *State) SetRunning(pid int) {
	s.Lock()
	s.Running = true
	s.ExitCode = 0
	s.Pid = pid
	s.StartedAt = time.Now().UTC()
	s.Unlock()
}

func (s *State) SetStopped(exitCode int) {
	s.Lock()
	s.Running = false
	s.Pid = 0
	s.FinishedAt = time.Now().UTC()
	s.ExitCode = exitCode
	s.Unlock()
}

// Container mirrors daemon/container.go: the State is embedded by pointer,
// so container.Lock() is State.Lock().
type Container struct {
	*State `json:"State"`
	ID     string
	Name   string
	Path   string
	Args   []string
	Image  string
}

// contStore mirrors daemon/daemon.go.
type contStore struct {
	s map[string]*Container
	sync.Mutex
}

func (c *contStore) Add(id string, cont *Container) {
	c.Lock()
	c.s[id] = cont
	c.Unlock()
}

func (c *contStore) List() []*Container {
	c.Lock()
	containers := make([]*Container, 0, len(c.s))
	for _, cont := range c.s {
		containers = append(containers, cont)
	}
	c.Unlock()
	sort.Slice(containers, func(i, j int) bool { return containers[i].ID < containers[j].ID })
	return containers
}

type Daemon struct {
	containers *contStore
}

func (daemon *Daemon) List() []*Container {
	return daemon.containers.List()
}

// Containers mirrors the job handler in daemon/list.go.
func (daemon *Daemon) Containers(all bool, filters map[string][]string) ([]string, error) {
	var (
		displayed   int
		filtExited  []int
		outs        []string
		errLast     = errors.New("last container")
		n           = -1
		since       = ""
		before      = ""
		foundBefore = false
	)
	if i, ok := filters["exited"]; ok {
		for _, value := range i {
			code, err := strconv.Atoi(value)
			if err != nil {
				return nil, err
			}
			filtExited = append(filtExited, code)
		}
	}

	writeCont := func(container *Container) error {
		container.Lock()
		defer container.Unlock()
		if !container.Running && !all && n <= 0 && since == "" && before == "" {
			return nil
		}
		if before != "" && !foundBefore {
			return nil
		}
		if n > 0 && displayed == n {
			return errLast
		}
		if len(filtExited) > 0 && !container.Running {
			shouldSkip := true
			for _, code := range filtExited {
				if code == container.ExitCode {
					shouldSkip = false
					break
				}
			}
			if shouldSkip {
				return nil
			}
		}
		displayed++
		outs = append(outs, fmt.Sprintf("%s %s running=%v exit=%d", container.ID, container.Name, container.Running, container.ExitCode))
		return nil
	}

	for _, container := range daemon.List() {
		if err := writeCont(container); err != nil {
			if err != errLast {
				return nil, err
			}
			break
		}
	}
	return outs, nil
}

func main() {
	daemon := &Daemon{containers: &contStore{s: make(map[string]*Container)}}
	for i, name := range []string{"web", "batch"} {
		c := &Container{State: NewState(), ID: fmt.Sprintf("c%d", i), Name: name, Path: "/bin/sh"}
		c.SetRunning(100 + i)
		daemon.containers.Add(c.ID, c)
	}
	// The monitor reports that the batch container exited with code 0.
	done := make(chan struct{})
	go func() {
		defer close(done)
		daemon.containers.List()[1].SetStopped(0)
	}()
	<-done

	// docker ps -a --filter exited=0
	outs, err := daemon.Containers(true, map[string][]string{"exited": {"0"}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, o := range outs {
		fmt.Println(o)
	}
}
