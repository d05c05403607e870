package wrong

import "sync"

type Stats struct {
	mu sync.Mutex
	// example:start

	//confined:gaurdedby mu // want `unknown directive //confined:gaurdedby; did you mean //confined:guardedby\? \[directive-unknown\]`
	count int
	// example:end
}
