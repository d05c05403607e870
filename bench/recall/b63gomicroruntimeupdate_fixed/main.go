// Fixed twin: PR #945 applied (Update no longer holds the runtime lock
// around the exported Delete and Create).
// Shape of micro/go-micro PR #945 ("Fix a runtime deadlock ... when calling
// Update since Delete/Create also lock"): the default runtime's Update holds
// the runtime's embedded RWMutex and calls the exported Delete and Create,
// which each lock it again. Update is reached from the runtime's run loop
// when the notifier reports a new version; every later Read then queues
// behind the stuck writer.
package main

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

type Service struct {
	Name     string
	Version  string
	Source   string
	Metadata map[string]string
}

type EventType int

const (
	Create EventType = iota
	Update
	Delete
)

type Event struct {
	Type      EventType
	Timestamp time.Time
	Service   string
	Version   string
}

type process struct {
	pid int
}

type service struct {
	sync.RWMutex
	*Service
	running bool
	proc    *process
}

var nextPid = 4000

func newService(s *Service) *service {
	md := map[string]string{}
	for k, v := range s.Metadata {
		md[k] = v
	}
	return &service{Service: &Service{Name: s.Name, Version: s.Version, Source: s.Source, Metadata: md}}
}

func (s *service) Start() error {
	s.Lock()
	defer s.Unlock()
	if s.running {
		return nil
	}
	nextPid++
	s.proc = &process{pid: nextPid}
	s.running = true
	s.Metadata["status"] = "started"
	return nil
}

func (s *service) Stop() error {
	s.Lock()
	defer s.Unlock()
	if !s.running {
		return nil
	}
	s.proc = nil
	s.running = false
	s.Metadata["status"] = "stopped"
	return nil
}

type runtime struct {
	sync.RWMutex
	running  bool
	services map[string]*service
}

func NewRuntime() *runtime { return &runtime{services: map[string]*service{}} }

func (r *runtime) Create(s *Service) error {
	r.Lock()
	defer r.Unlock()
	if _, ok := r.services[s.Name]; ok {
		return errors.New("service already registered")
	}
	svc := newService(s)
	if err := svc.Start(); err != nil {
		return err
	}
	r.services[s.Name] = svc
	return nil
}

func (r *runtime) Read() ([]*Service, error) {
	r.RLock()
	defer r.RUnlock()
	var out []*Service
	for _, s := range r.services {
		s.RLock()
		out = append(out, &Service{Name: s.Name, Version: s.Version, Metadata: map[string]string{"status": s.Metadata["status"]}})
		s.RUnlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Update does not lock: Delete and Create take the runtime lock themselves.
func (r *runtime) Update(s *Service) error {
	// delete the service
	if err := r.Delete(s); err != nil {
		return err
	}
	// create new service
	return r.Create(s)
}

func (r *runtime) Delete(s *Service) error {
	r.Lock()
	defer r.Unlock()
	if svc, ok := r.services[s.Name]; ok {
		if err := svc.Stop(); err != nil {
			return err
		}
		delete(r.services, s.Name)
	}
	return nil
}

// run applies the notifier's events.
func (r *runtime) run(events <-chan Event) {
	for ev := range events {
		switch ev.Type {
		case Update:
			if err := r.Update(&Service{Name: ev.Service, Version: ev.Version}); err != nil {
				fmt.Println("update failed:", err)
			}
		case Delete:
			r.Delete(&Service{Name: ev.Service})
		}
	}
}

func main() {
	r := NewRuntime()
	r.Create(&Service{Name: "go.micro.srv.greeter", Version: "latest", Source: "github.com/micro/examples/greeter/srv"})

	events := make(chan Event, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.run(events)
	}()
	// the notifier saw a new commit of the service's source
	events <- Event{Type: Update, Timestamp: time.Now(), Service: "go.micro.srv.greeter", Version: "8d1f0a2"}
	close(events)

	time.Sleep(50 * time.Millisecond)
	svcs, _ := r.Read() // micro list services
	for _, s := range svcs {
		fmt.Println(s.Name, s.Version, s.Metadata["status"])
	}
	wg.Wait()
}
