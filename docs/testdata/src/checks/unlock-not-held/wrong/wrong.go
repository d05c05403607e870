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

func (q *Queue) Pop() (int, error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return 0, errClosed
	}
	x := q.items[0]
	q.items = q.items[1:]
	q.mu.Unlock()
	q.mu.Unlock() // want `\[unlock-not-held\]`
	return x, nil
}

// example:end
