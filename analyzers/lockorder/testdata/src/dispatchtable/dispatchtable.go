// Package dispatchtable: a func value that may hold any of many
// functions (a message bus's subscription callbacks, nats-server's 80)
// is a dispatch table: which one runs is not known, and an edge from
// each would be a guess about all of them. Beyond 24 candidates the call
// resolves to nothing; a handful still give their edges.
package dispatchtable

import "sync"

type Handler func(b *Bus, m string)

type subscription struct{ cb Handler }

// Bus delivers under its lock to every subscription.
type Bus struct {
	mu   sync.Mutex
	subs []*subscription
	seen int
}

func (b *Bus) Subscribe(h Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs = append(b.subs, &subscription{cb: h})
}

func (b *Bus) Publish(m string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.subs {
		s.cb(b, m)
	}
}

// Store takes the bus's lock under its own: the other order is only
// one of many handlers' (silent).
type Store struct {
	mu    sync.Mutex
	items map[string]int
	bus   *Bus
}

var store = &Store{items: map[string]int{}}

func handleStore(b *Bus, m string) {
	store.mu.Lock()
	store.items[m]++
	store.mu.Unlock()
}

func (s *Store) Put(m string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[m] = 0
	s.bus.Publish(m)
}

func handle1(b *Bus, m string)  { b.seen += len(m) + 1 }
func handle2(b *Bus, m string)  { b.seen += len(m) + 2 }
func handle3(b *Bus, m string)  { b.seen += len(m) + 3 }
func handle4(b *Bus, m string)  { b.seen += len(m) + 4 }
func handle5(b *Bus, m string)  { b.seen += len(m) + 5 }
func handle6(b *Bus, m string)  { b.seen += len(m) + 6 }
func handle7(b *Bus, m string)  { b.seen += len(m) + 7 }
func handle8(b *Bus, m string)  { b.seen += len(m) + 8 }
func handle9(b *Bus, m string)  { b.seen += len(m) + 9 }
func handle10(b *Bus, m string) { b.seen += len(m) + 10 }
func handle11(b *Bus, m string) { b.seen += len(m) + 11 }
func handle12(b *Bus, m string) { b.seen += len(m) + 12 }
func handle13(b *Bus, m string) { b.seen += len(m) + 13 }
func handle14(b *Bus, m string) { b.seen += len(m) + 14 }
func handle15(b *Bus, m string) { b.seen += len(m) + 15 }
func handle16(b *Bus, m string) { b.seen += len(m) + 16 }
func handle17(b *Bus, m string) { b.seen += len(m) + 17 }
func handle18(b *Bus, m string) { b.seen += len(m) + 18 }
func handle19(b *Bus, m string) { b.seen += len(m) + 19 }
func handle20(b *Bus, m string) { b.seen += len(m) + 20 }
func handle21(b *Bus, m string) { b.seen += len(m) + 21 }
func handle22(b *Bus, m string) { b.seen += len(m) + 22 }
func handle23(b *Bus, m string) { b.seen += len(m) + 23 }
func handle24(b *Bus, m string) { b.seen += len(m) + 24 }
func handle25(b *Bus, m string) { b.seen += len(m) + 25 }

func Wire(b *Bus) {
	b.Subscribe(handleStore)
	b.Subscribe(handle1)
	b.Subscribe(handle2)
	b.Subscribe(handle3)
	b.Subscribe(handle4)
	b.Subscribe(handle5)
	b.Subscribe(handle6)
	b.Subscribe(handle7)
	b.Subscribe(handle8)
	b.Subscribe(handle9)
	b.Subscribe(handle10)
	b.Subscribe(handle11)
	b.Subscribe(handle12)
	b.Subscribe(handle13)
	b.Subscribe(handle14)
	b.Subscribe(handle15)
	b.Subscribe(handle16)
	b.Subscribe(handle17)
	b.Subscribe(handle18)
	b.Subscribe(handle19)
	b.Subscribe(handle20)
	b.Subscribe(handle21)
	b.Subscribe(handle22)
	b.Subscribe(handle23)
	b.Subscribe(handle24)
	b.Subscribe(handle25)
}

// Queue has a handful of handlers: each one's edges count.
type Queue struct {
	mu    sync.Mutex
	hooks []func(q *Queue)
	jobs  int
}

type Ledger struct {
	mu    sync.Mutex
	total int
	queue *Queue
}

var ledger = &Ledger{}

func (q *Queue) Run() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, h := range q.hooks {
		h(q)
	}
}

func countJob(q *Queue) { q.jobs++ }

func bill(q *Queue) {
	ledger.mu.Lock()
	ledger.total++
	ledger.mu.Unlock()
}

func (l *Ledger) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue.Run() // want `lock order inversion: Queue.mu then Ledger.mu in Queue.Run .*via bill.* but Ledger.mu then Queue.mu in Ledger.Close`
}

func WireQueue(q *Queue) {
	q.hooks = append(q.hooks, countJob, bill)
}
