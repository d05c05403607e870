package right

import "sync"

// example:start

type Queue struct {
	mu sync.Mutex
	//confined:guardedby mu
	items []string
	//confined:guardedby mu
	waiting int
}

func (q *Queue) Push(s string) {
	q.mu.Lock()
	q.items = append(q.items, s)
	q.waiting++
	q.mu.Unlock()
}

// example:end
