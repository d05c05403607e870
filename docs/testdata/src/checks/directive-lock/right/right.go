package right

import "sync"

// example:start

type Cache struct {
	mu sync.Mutex
	//confined:guardedby mu
	m map[string]int
}

// example:end
