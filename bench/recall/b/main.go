package main

import "sync"

type lessor struct {
	mu sync.Mutex
	cp func(id int)
	n  int
}

func (le *lessor) SetCheckpointer(cp func(id int)) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.cp = cp
}

func (le *lessor) Renew(id int) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.cp != nil {
		le.cp(id)
	}
}

func (le *lessor) Checkpoint(id int) {
	le.mu.Lock()
	le.n = id
	le.mu.Unlock()
}

func main() {
	le := &lessor{}
	le.SetCheckpointer(func(id int) { le.Checkpoint(id) })
	le.Renew(1)
}
