// Style: like hashicorp consul agent local state (AddService). The lock is
// released early on the validation-error path so the slow logging happens
// outside it; an `unlocked` flag stops the deferred unlock from running twice.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
)

type Service struct {
	ID   string
	Port int
}

type localState struct {
	mu       sync.Mutex
	services map[string]Service
	logger   *log.Logger
}

func validate(s Service) error {
	if s.ID == "" {
		return errors.New("missing service ID")
	}
	if s.Port <= 0 || s.Port > 65535 {
		return fmt.Errorf("service %q: invalid port %d", s.ID, s.Port)
	}
	return nil
}

func (l *localState) AddService(s Service) error {
	l.mu.Lock()
	unlocked := false
	defer func() {
		if !unlocked {
			l.mu.Unlock()
		}
	}()

	if err := validate(s); err != nil {
		n := len(l.services)
		l.mu.Unlock()
		unlocked = true
		l.logger.Printf("rejecting service (have %d): %v", n, err)
		return err
	}
	if _, ok := l.services[s.ID]; ok {
		return fmt.Errorf("service %q already registered", s.ID)
	}
	l.services[s.ID] = s
	return nil
}

func (l *localState) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.services)
}

func main() {
	l := &localState{
		services: make(map[string]Service),
		logger:   log.New(os.Stdout, "[agent] ", 0),
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := Service{ID: fmt.Sprintf("web-%d", i%8), Port: 8000 + i}
			if i%5 == 0 {
				s.Port = -1
			}
			_ = l.AddService(s)
		}(i)
	}
	wg.Wait()
	fmt.Println("services:", l.Len())
}
