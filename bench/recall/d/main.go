package main

import (
	"errors"
	"sync"
)

type store struct {
	mu   sync.Mutex
	data map[string]string
}

func (s *store) put(k, v string) error {
	s.mu.Lock()
	if k == "" {
		return errors.New("empty key")
	}
	s.data[k] = v
	s.mu.Unlock()
	return nil
}

func main() {
	s := &store{data: map[string]string{}}
	_ = s.put("", "x")
	_ = s.put("a", "b")
}
