//go:build confine || race

package confine

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
)

// goroutineIDFromStack parses the id from the "goroutine N [" header that
// runtime.Stack writes. It is the only supported way to learn a goroutine's
// id, so it is the reference the fast path is checked against, and the
// fallback where the fast path is unavailable: about a microsecond.
func goroutineIDFromStack() uint64 {
	hideSyncBegin()
	id := parseStackHeader()
	hideSyncEnd()
	if id == 0 {
		panic("confine: cannot parse the goroutine id from runtime.Stack")
	}
	return id
}

// stackHeader is the buffer goroutineIDFromStack parses. A local array
// would escape (runtime.Stack leaks its argument) and cost an allocation
// per call; a shared one under a mutex does not.
var stackHeader struct {
	mu  sync.Mutex
	buf [64]byte
}

//go:norace
func parseStackHeader() uint64 {
	stackHeader.mu.Lock()
	defer stackHeader.mu.Unlock()
	header := stackHeader.buf[:runtime.Stack(stackHeader.buf[:], false)]
	header = bytes.TrimPrefix(header, []byte("goroutine "))
	var id uint64
	for _, c := range header {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// goroutineAlive reports whether goroutine id still exists. It takes a dump
// of every goroutine (stopping the world), so it is used only on the rare
// path where Bind finds the owner bound elsewhere.
func goroutineAlive(id uint64) bool {
	// "goroutine 7 [running]:", or "goroutine 7 gp=... [running]:" with
	// GOTRACEBACK=system.
	header := strconv.AppendUint([]byte("goroutine "), id, 10)
	header = append(header, ' ')
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for len(buf) > 0 {
		if bytes.HasPrefix(buf, header) {
			return true
		}
		// Goroutine headers start a line; skip to the next line.
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		buf = buf[i+1:]
	}
	return false
}
