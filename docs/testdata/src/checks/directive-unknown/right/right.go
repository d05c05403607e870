package right

import "sync"

type Stats struct {
	mu sync.Mutex
	// example:start

	//confined:guardedby mu
	count int
	// example:end
}
