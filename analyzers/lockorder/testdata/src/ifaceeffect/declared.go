package ifaceeffect

import "sync"

// Notifier's implementation is declared by a package-level assertion
// only: the package converts *hub to Notifier nowhere else.
type Notifier interface{ Notify() }

type hub struct {
	mu   sync.Mutex
	seen int
	reg  *Registry
}

var _ Notifier = (*hub)(nil)

func (h *hub) Notify() {
	h.mu.Lock()
	h.seen++
	h.mu.Unlock()
}

type Registry struct {
	mu sync.Mutex
	n  Notifier
}

func (r *Registry) publish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.Notify()
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reg.mu.Lock() // want `lock order inversion: Registry.mu then hub.mu in Registry.publish \(declared.go:29 -> declared.go:31 via hub.Notify\) but hub.mu then Registry.mu in hub.close \(declared.go:35 -> declared.go:37\) \[lock-order\]`
	h.reg.mu.Unlock()
}
