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

func (q *Queue) Pop() (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, errClosed
	}
	x := q.items[0]
	q.items = q.items[1:]
	return x, nil
}

// example:end
