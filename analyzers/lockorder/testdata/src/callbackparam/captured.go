package callbackparam

import "sync"

// A function hands a helper a closure that calls the func value the
// function was given (updateInstance(update) passing the store's CAS a
// closure calling update), under its own lock: its callers know update.
// A heartbeat's update notifies a delegate whose lock is taken, in the
// delegate's refresh, before the lifecycler's.
type KV struct {
	mu   sync.Mutex
	data map[string]int
}

func (kv *KV) CAS(key string, f func(in int) int) {
	kv.mu.Lock()
	in := kv.data[key]
	kv.mu.Unlock()
	out := f(in)
	kv.mu.Lock()
	kv.data[key] = out
	kv.mu.Unlock()
}

type Delegate struct {
	mtx     sync.Mutex
	l       *Lifecycler
	healthy int
}

func (d *Delegate) OnHeartbeat(n int) {
	d.mtx.Lock()
	d.healthy = n
	d.mtx.Unlock()
}

func (d *Delegate) refresh() int {
	d.mtx.Lock()
	defer d.mtx.Unlock()
	return d.l.State()
}

type Lifecycler struct {
	state    sync.RWMutex
	store    *KV
	delegate *Delegate
	current  int
}

func (l *Lifecycler) State() int {
	l.state.RLock()
	defer l.state.RUnlock()
	return l.current
}

func (l *Lifecycler) updateInstance(update func(int) int) {
	l.state.Lock()
	defer l.state.Unlock()
	l.store.CAS("ring", func(in int) int {
		return update(in) // want `lock order inversion: Delegate.mtx then Lifecycler.state in Delegate.refresh \(captured.go:38 -> captured.go:40 via Lifecycler.State\) but Lifecycler.state then Delegate.mtx in Lifecycler.updateInstance.func1 \(captured.go:57 -> captured.go:60 via Lifecycler.heartbeat.func1 -> Delegate.OnHeartbeat, passed at captured.go:\d+\) \[lock-order\]`
	})
	l.current++
}

func (l *Lifecycler) heartbeat() {
	l.updateInstance(func(n int) int {
		l.delegate.OnHeartbeat(n)
		return n + 1
	})
}

// Correct: the update runs after the lifecycler's lock is let go.
type Tracker struct {
	state    sync.RWMutex
	store    *KV
	delegate *Delegate
	current  int
}

func (t *Tracker) updateInstance(update func(int) int) {
	t.state.Lock()
	t.current++
	t.state.Unlock()
	t.store.CAS("ring", func(in int) int {
		return update(in)
	})
}

func (t *Tracker) heartbeat() {
	t.updateInstance(func(n int) int {
		t.delegate.OnHeartbeat(n)
		return n + 1
	})
}
