package wrong

import "sync"

type Buffer struct {
	mu sync.Mutex
	// example:start

	//confined:guardedby // want `//confined:guardedby takes exactly one lock, got 0 arguments; usage: //confined:guardedby MU \[directive-args\]`
	buf []byte
	//confined:guardedby mu      protects buf and len // want `//confined:guardedby takes exactly one lock, got 5 arguments.*\[directive-args\]`
	n int
	// example:end
}
