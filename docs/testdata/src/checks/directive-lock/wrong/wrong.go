package wrong

import "sync"

// example:start

type Cache struct {
	mu sync.Mutex
	//confined:guardedby mtx // want `//confined:guardedby: .*mtx.*\[directive-lock\]`
	m map[string]int
}

// example:end
