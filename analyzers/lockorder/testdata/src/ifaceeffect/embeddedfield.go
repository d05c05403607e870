package ifaceeffect

import "sync"

// A type that has a method from an embedded interface field (a database
// made of a key-value store and an ancient store, each an interface)
// runs what that interface's implementations run: a call through the
// database's interface reaches the ancient store's ReadAncients.

type AncientReader interface {
	Ancient(n int) []byte
}

type AncientStore interface {
	AncientReader
	ReadAncients(fn func(AncientReader))
	ModifyAncients(fn func())
}

type KeyValue interface {
	Get(key string) []byte
}

type ChainReader interface {
	KeyValue
	AncientReader
	ReadAncients(fn func(AncientReader))
}

type freezer struct {
	writeLock sync.RWMutex
	items     map[int][]byte
}

func (f *freezer) Ancient(n int) []byte { return f.items[n] }

func (f *freezer) ReadAncients(fn func(AncientReader)) {
	f.writeLock.RLock()
	defer f.writeLock.RUnlock()
	fn(f)
}

func (f *freezer) ModifyAncients(fn func()) {
	f.writeLock.Lock()
	defer f.writeLock.Unlock()
	fn()
}

type memory struct{ m map[string][]byte }

func (m *memory) Get(key string) []byte { return m.m[key] }

type chainDB struct {
	KeyValue
	AncientStore
}

func hashAt(db ChainReader, n int) []byte {
	var h []byte
	db.ReadAncients(func(r AncientReader) { h = r.Ancient(n) })
	return h
}

// bodyAt asks for the hash inside its own ReadAncients: the read lock
// is taken again, and a freezer writer queued between the two waits for
// the first while the second waits for it.
func bodyAt(db ChainReader, n int) []byte {
	var b []byte
	db.ReadAncients(func(r AncientReader) { // want `RLock of freezer.writeLock by freezer.ReadAncients -> bodyAt.func1 -> hashAt -> freezer.ReadAncients \(at embeddedfield.go:38\) while already read-locked since embeddedfield.go:38: deadlocks behind a waiting writer \[double-lock\]`
		b = db.Get(string(hashAt(db, n)))
	})
	return b
}

// bodyFrom reads the hash through the reader it was handed: silent.
func bodyFrom(db ChainReader, n int) []byte {
	var b []byte
	db.ReadAncients(func(r AncientReader) {
		b = db.Get(string(r.Ancient(n)))
	})
	return b
}

func openChain() (ChainReader, AncientStore) {
	f := &freezer{items: map[int][]byte{}}
	var store AncientStore = f
	return &chainDB{KeyValue: &memory{m: map[string][]byte{}}, AncientStore: store}, store
}

// Correct code beside it: a transaction wrapper embedding Txn has Rev
// from Txn, which declares it through View; the wrapper runs what Txn's
// values run (baseTxn's Rev), not a View that is no transaction
// (viewImpl, which locks the index), so record orders nothing against
// reindex: silent.

type View interface{ Rev() int }

type Txn interface {
	View
	End()
}

type Index struct {
	mu  sync.Mutex
	rev int
}

type viewImpl struct{ idx *Index }

func (v *viewImpl) Rev() int {
	v.idx.mu.Lock()
	defer v.idx.mu.Unlock()
	return v.idx.rev
}

type baseTxn struct{ rev int }

func (t *baseTxn) Rev() int { return t.rev }
func (t *baseTxn) End()     {}

type countingTxn struct {
	Txn
	n int
}

type Ledger struct {
	mu  sync.Mutex
	idx *Index
	rev int
}

func (l *Ledger) record(t Txn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rev = t.Rev()
	t.End()
}

func (l *Ledger) reindex() {
	l.idx.mu.Lock()
	defer l.idx.mu.Unlock()
	l.mu.Lock()
	l.idx.rev = l.rev
	l.mu.Unlock()
}

func openLedger(idx *Index) (View, Txn) {
	return &viewImpl{idx: idx}, &countingTxn{Txn: &baseTxn{}}
}
