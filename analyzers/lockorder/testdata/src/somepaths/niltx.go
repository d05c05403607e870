package somepaths

import "sync"

// A helper that opens a transaction unless it is given one (`if tx ==
// nil { s.Update(fn) } else { fn(tx) }`), called by a transaction's own
// function with that transaction: the Update branch is for callers that
// pass nil, which the argument decides, not a choice to call Update
// (lnd's markEdgeLiveUnsafe inside FilterKnownChanIDs' transaction).
// Silent. Given nil inside the transaction, it opens a second one: a
// double lock.
type zstore struct {
	mu      sync.Mutex
	zombies map[uint64]bool
}

type ztx struct{ s *zstore }

func (s *zstore) Update(f func(*ztx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(&ztx{s: s})
}

func (s *zstore) markLive(tx *ztx, id uint64) error {
	fn := func(tx *ztx) error {
		delete(tx.s.zombies, id)
		return nil
	}
	if tx == nil {
		return s.Update(fn)
	}
	return fn(tx)
}

func (s *zstore) revive(ids []uint64) error {
	return s.Update(func(tx *ztx) error {
		for _, id := range ids {
			if tx.s.zombies[id] {
				if err := s.markLive(tx, id); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (s *zstore) reviveNested(ids []uint64) error {
	return s.Update(func(tx *ztx) error { // want `zstore.mu locked again by zstore.Update -> zstore.reviveNested.func1 -> zstore.markLive -> zstore.Update \(at niltx.go:20\) while held since niltx.go:20: self-deadlock \[double-lock\]`
		for _, id := range ids {
			if err := s.markLive(nil, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// A client pool runs a callback under its lock for each id, passing the
// connected client or nil; for nil (a disconnected client) the callback
// asks the pool for the balance, locking it again (go-ethereum's
// clientPool.forClients). The pool passes a map lookup, which may be nil:
// the nil side is reached.
type cpool struct {
	mu       sync.Mutex
	conns    map[int]*pconn
	balances map[int]int
}

type pconn struct{ bal int }

func (p *cpool) forClients(ids []int, cb func(*pconn, int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		cb(p.conns[id], id)
	}
}

func (p *cpool) balance(id int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.balances[id]
}

func (p *cpool) info(c *pconn, id int) int {
	if c != nil {
		return c.bal
	}
	return p.balance(id)
}

func (p *cpool) Infos(ids []int) map[int]int {
	out := map[int]int{}
	p.forClients(ids, func(c *pconn, id int) { out[id] = p.info(c, id) }) // want `cpool.mu locked again by cpool.forClients -> cpool.Infos.func1 -> cpool.info -> cpool.balance \(at niltx.go:\d+, on the paths that call cpool.balance\) while held since niltx.go:\d+: self-deadlock \[double-lock\]`
	return out
}

// The transaction carried in a field of what the helper's caller is
// given (OPA's decision log handed &Info{Txn: txn}): the helper's nil
// branch is that field's, which the transaction's function fills with
// its own transaction. Silent.
type zdecision struct {
	id  uint64
	txn *ztx
}

func (s *zstore) logDecision(d *zdecision) error { return s.markLive(d.txn, d.id) }

func (s *zstore) check(id uint64) error {
	return s.Update(func(tx *ztx) error {
		return s.logDecision(&zdecision{id: id, txn: tx})
	})
}

// A helper that takes another lock only where it is given no
// transaction, called by the transaction's function with that
// transaction, never takes it under the store's lock: no order of the
// store's lock before the audit lock, so the audit rotation's order is
// no inversion. Silent.
type auditStore struct {
	mu      sync.Mutex
	auditMu sync.Mutex
	lines   int
}

type atx struct{ s *auditStore }

func (s *auditStore) Update(f func(*atx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(&atx{s: s})
}

func (s *auditStore) audit(tx *atx) {
	if tx == nil {
		s.auditMu.Lock()
		s.lines++
		s.auditMu.Unlock()
	}
}

func (s *auditStore) commitAudited() error {
	return s.Update(func(tx *atx) error {
		s.audit(tx)
		return nil
	})
}

func (s *auditStore) rotate() error {
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	return s.Update(func(tx *atx) error { return nil })
}

// A helper that opens a read transaction only when it is given none,
// called under a logger's mask lock; its one caller passes on the
// transaction of the decision it is given, and the decision's one maker
// fills it with the transaction it opened (OPA's decision log, against a
// bundle commit that write-locks the store and takes the mask lock). No
// call gives it nil: the mask lock orders nothing before the store's.
// Silent.
type rstore struct {
	rmu  sync.RWMutex
	data map[string]string
	log  *maskLog
}

type rtxn struct{ s *rstore }

func (s *rstore) begin() *rtxn {
	s.rmu.RLock()
	return &rtxn{s: s}
}

func (s *rstore) abort(*rtxn) { s.rmu.RUnlock() }

func (s *rstore) commit(k, v string) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.data[k] = v
	s.log.invalidate()
}

type maskLog struct {
	mu   sync.Mutex
	s    *rstore
	mask string
}

type decision struct {
	id  string
	txn *rtxn
}

func (m *maskLog) invalidate() {
	m.mu.Lock()
	m.mask = ""
	m.mu.Unlock()
}

func (m *maskLog) prepare(txn *rtxn) string {
	if txn == nil {
		txn = m.s.begin()
		defer m.s.abort(txn)
	}
	return txn.s.data["mask"]
}

func (m *maskLog) maskEvent(txn *rtxn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mask == "" {
		m.mask = m.prepare(txn)
	}
}

func (m *maskLog) logDecision(d *decision) { m.maskEvent(d.txn) }

func (s *rstore) check(id string) {
	txn := s.begin()
	defer s.abort(txn)
	s.log.logDecision(&decision{id: id, txn: txn})
}
