package right

import "sync"

type Buffer struct {
	mu sync.Mutex
	// example:start

	//confined:guardedby mu
	buf []byte
	//confined:guardedby mu // protects buf and len
	n int
	// example:end
}
