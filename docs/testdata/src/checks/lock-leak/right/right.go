package right

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
	defer q.mu.Unlock()
	if q.closed {
		return errClosed
	}
	q.items = append(q.items, x)
	return nil
}

// example:end
