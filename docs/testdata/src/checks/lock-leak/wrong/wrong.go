package wrong

import (
	"errors"
	"sync"
)

var errClosed = errors.New("closed")

type Queue struct {
	mu     sync.Mutex
	closed bool
	items  []int
}

// example:start

func (q *Queue) Push(x int) error {
	q.mu.Lock()
	if q.closed {
		return errClosed // want `\[lock-leak\]`
	}
	q.items = append(q.items, x)
	q.mu.Unlock()
	return nil
}

// example:end
