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
