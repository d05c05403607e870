package callbackparam

import "sync"

// A function that holds its own lock while it passes the function it was
// given on to a helper that calls it: the edge from its lock to what the
// function takes is witnessed in it, at its call of the helper (a
// stopper closing a closer under its lock once stopping, cockroach's
// AddCloser), not in the helper, which holds nothing.
type Hooks struct {
	mu    sync.Mutex
	hooks []func()
}

func runNow(f func()) { f() }

func (h *Hooks) Add(f func(), now bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now {
		runNow(f)
		return
	}
	h.hooks = append(h.hooks, f)
}

func (h *Hooks) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.hooks)
}

type Replicas struct {
	mu    sync.Mutex
	n     int
	hooks *Hooks
}

func (r *Replicas) visit() {
	r.mu.Lock()
	r.n++
	r.mu.Unlock()
}

func (r *Replicas) Register() {
	r.hooks.Add(func() { r.visit() }, true)
}

func (r *Replicas) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n + r.hooks.Len() // want `lock order inversion: Hooks.mu then Replicas.mu in Hooks.Add \(holder.go:\d+ -> holder.go:\d+ via runNow -> Replicas.Register.func1 -> Replicas.visit, passed at holder.go:\d+\) but Replicas.mu then Hooks.mu in Replicas.Count \(holder.go:\d+ -> holder.go:\d+ via Hooks.Len\) \[lock-order\]`
}

// Queued registers its hook for later, after Add let its lock go: the
// constant false makes Add's runNow branch dead. Silent.
type Queued struct {
	mu    sync.Mutex
	n     int
	hooks *Hooks
}

func (q *Queued) visit() {
	q.mu.Lock()
	q.n++
	q.mu.Unlock()
}

func (q *Queued) Register() {
	q.hooks.Add(func() { q.visit() }, false)
}

func (q *Queued) Count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n + q.hooks.Len()
}
