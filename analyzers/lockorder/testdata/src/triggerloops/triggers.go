package triggerloops

import "sync"

// A commit runs, under the store's write lock, the triggers registered
// in a slice, one of which runs the compiler triggers registered in
// another slice, one of which takes the decision logger's mask lock; the
// logger, under its mask lock, read-locks the store (OPA's bundle commit
// and decision log). Behind the commit's branch on the transaction's kind
// and two loops, the take is three steps away; a loop run on every path
// is no condition for the bound of an order edge, so the take is within
// it and the inversion is reported.
type trigger struct {
	onCommit func()
}

type policyStore struct {
	mu       sync.RWMutex
	policy   string
	triggers []trigger
}

func (s *policyStore) commit(p string, write bool) {
	if write {
		s.mu.Lock()
		s.policy = p
		s.runTriggers()
		s.mu.Unlock()
	}
}

func (s *policyStore) runTriggers() {
	for _, t := range s.triggers {
		t.onCommit()
	}
}

func (s *policyStore) read() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.policy
}

type pluginManager struct {
	compilerTriggers []func()
}

func (m *pluginManager) register(f func()) { m.compilerTriggers = append(m.compilerTriggers, f) }

func (m *pluginManager) onCommit() {
	for _, f := range m.compilerTriggers {
		f()
	}
}

type decisionLog struct {
	maskMu sync.Mutex
	store  *policyStore
	mask   string
}

func (l *decisionLog) compilerUpdated() {
	l.maskMu.Lock()
	l.mask = ""
	l.maskMu.Unlock()
}

func (l *decisionLog) log() {
	l.maskMu.Lock()
	defer l.maskMu.Unlock()
	if l.mask == "" {
		l.mask = l.store.read() // want `lock order inversion: policyStore.mu then decisionLog.maskMu in policyStore.commit`
	}
}

func wirePolicy() (*policyStore, *decisionLog) {
	s := &policyStore{}
	m := &pluginManager{}
	s.triggers = append(s.triggers, trigger{onCommit: m.onCommit})
	l := &decisionLog{store: s}
	m.register(l.compilerUpdated)
	return s, l
}
