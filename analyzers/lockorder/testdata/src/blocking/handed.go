package blocking

import "sync"

// A goroutine started to run a function it was handed takes what that
// function takes: a timer's loop calls its housekeeping callback between
// receives of the stop message (vitess' semi-sync monitor), a group's
// goroutine runs its function before the deferred Done (a tomb's Go).

type Ticker struct {
	mu      sync.Mutex
	running bool
	stop    chan struct{}
}

func (t *Ticker) Start(keephouse func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.running {
		t.running = true
		go t.run(keephouse)
	}
}

func (t *Ticker) run(keephouse func()) {
	for {
		select {
		case <-t.stop:
			return
		default:
		}
		keephouse()
	}
}

func (t *Ticker) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		t.stop <- struct{}{}
		t.running = false
	}
}

type Monitor struct {
	mu      sync.Mutex
	ticks   *Ticker
	blocked bool
}

func (m *Monitor) check() {
	m.mu.Lock()
	m.blocked = !m.blocked
	m.mu.Unlock()
}

func (m *Monitor) Open() { m.ticks.Start(m.check) }

// Close stops the ticker under the lock its callback takes.
func (m *Monitor) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ticks.Stop() // want `Monitor.mu \(taken at handed.go:\d+\) is held across a channel send \(in Ticker.Stop at handed.go:\d+\); the goroutine started by the go statement, running the function it was handed \(Monitor.check\), which would unblock it, also takes Monitor.mu \[blocking-held\]`
}

// CloseUnlocked stops it first. Silent.
func (m *Monitor) CloseUnlocked() {
	m.ticks.Stop()
	m.mu.Lock()
	m.blocked = false
	m.mu.Unlock()
}

// Group runs functions on goroutines of its own and waits for them.
type Group struct{ wg sync.WaitGroup }

func (g *Group) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}

func (g *Group) Wait() { g.wg.Wait() }

type Vault struct {
	l         sync.Mutex
	workers   *Group
	connected bool
}

func discardErr(f func() error) func() { return func() { _ = f() } }

func (v *Vault) connect() error {
	v.l.Lock()
	v.connected = true
	v.l.Unlock()
	return nil
}

func (v *Vault) Start() { v.workers.Go(discardErr(v.connect)) }

// Reload waits for the workers under the lock connect takes.
func (v *Vault) Reload() {
	v.l.Lock()
	defer v.l.Unlock()
	v.workers.Wait() // want `Vault.l \(taken at handed.go:\d+\) is held across a WaitGroup.Wait \(in Group.Wait at handed.go:\d+\); the goroutine started by the go statement, running the function it was handed \(Vault.connect\), which would unblock it, also takes Vault.l \[blocking-held\]`
	v.workers = &Group{}
}

// ReloadUnlocked waits first. Silent.
func (v *Vault) ReloadUnlocked() {
	v.workers.Wait()
	v.l.Lock()
	v.workers = &Group{}
	v.l.Unlock()
}

// A worker that receives the stop before it runs what it was handed,
// once, does not wait for the lock to unblock the sender. Silent.
type Once struct {
	mu   sync.Mutex
	stop chan struct{}
}

func (o *Once) Start(f func()) {
	go func() {
		<-o.stop
		f()
	}()
}

type Owner struct {
	mu   sync.Mutex
	once *Once
	n    int
}

func (w *Owner) bump() {
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
}

func (w *Owner) Run() { w.once.Start(w.bump) }

func (w *Owner) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.once.stop <- struct{}{}
}

// Two groups of one type: the callers' group runs Reload, which takes
// reload; Reload's own group runs probes, which do not. Waiting for its
// own group under reload is fine. Silent.
type Prober struct {
	reload  sync.Mutex
	results sync.Mutex
	healthy int
}

func (p *Prober) probe() {
	p.results.Lock()
	p.healthy++
	p.results.Unlock()
}

func (p *Prober) Reload() {
	p.reload.Lock()
	defer p.reload.Unlock()
	var g Group
	g.Go(p.probe)
	g.Go(p.probe)
	g.Wait()
}

func RunCallers(p *Prober) {
	var callers Group
	callers.Go(p.Reload)
	callers.Go(p.Reload)
	callers.Wait()
}
