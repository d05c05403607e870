package implicitstring

import (
	"bytes"
	"log"
	"sync"
)

// A logger behind an interface the package cannot resolve (a package var
// of its own interface type, pointing at another package's logger): a
// method named and typed like log's Printf formats its operands as log's
// does, on the paths where it formats at all (a discarding logger, a
// level filter may not).
type StdLogger interface {
	Printf(format string, v ...any)
	Println(v ...any)
}

var Logger StdLogger = log.New(&bytes.Buffer{}, "", 0)

type Host struct {
	mu   sync.RWMutex
	id   string
	port int
}

func (h *Host) String() string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.id
}

func (h *Host) update(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id != h.id {
		Logger.Printf("host %v changed id to %q", h, id) // want `Host.mu locked again by StdLogger.Printf -> Host.String \(at ifacelogger.go:28, on the paths that call StdLogger.Printf -> Host.String\) while held since ifacelogger.go:34: self-deadlock \[double-lock\]`
	}
	h.id = id
}

// Correct: a verb that does not call String, a field instead of the host,
// and the host logged after the unlock.
func (h *Host) move(port int) {
	h.mu.Lock()
	Logger.Printf("host %p moved to %d", h, port)
	Logger.Println("moved", h.id)
	h.port = port
	h.mu.Unlock()
	Logger.Println("moved", h)
}
