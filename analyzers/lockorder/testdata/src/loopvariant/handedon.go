package loopvariant

import "sync"

// A helper that read-locks a block and returns the appender that holds
// it until Commit, called on each block of a slice a method returns, the
// appenders kept: each block's lock goes with its own appender, no
// re-lock on the next turn (prometheus tsdb's dbAppender collecting
// head appenders), while Close write-locks a block. Silent. The same
// helper called on the first block every turn re-locks it.
type headBlock struct {
	mtx    sync.RWMutex
	closed bool
}

type headAppender struct{ h *headBlock }

func (h *headBlock) Appender() *headAppender {
	h.mtx.RLock()
	return &headAppender{h: h}
}

func (a *headAppender) Commit() { a.h.mtx.RUnlock() }

func (h *headBlock) Close() {
	h.mtx.Lock()
	defer h.mtx.Unlock()
	h.closed = true
}

type headDB struct {
	heads []*headBlock
	keep  int
}

func (db *headDB) appendable() []*headBlock {
	if len(db.heads) <= db.keep {
		return db.heads
	}
	return db.heads[len(db.heads)-db.keep:]
}

func (db *headDB) Appenders() []*headAppender {
	var out []*headAppender
	for _, h := range db.appendable() {
		out = append(out, h.Appender())
	}
	return out
}

func (db *headDB) FirstAppenders() []*headAppender {
	var out []*headAppender
	hs := db.appendable()
	for range hs {
		out = append(out, hs[0].Appender()) // want `headBlock.mtx may still be read-locked from the previous loop iteration`
	}
	return out
}
