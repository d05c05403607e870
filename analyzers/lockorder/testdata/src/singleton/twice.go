package main

import "sync"

// A store given to a visitor twice, as itself and as the reader its
// callback asks (cockroach's verifyStore): the callback's read lock is
// the lock ForEach holds at its call, under another name. The program
// makes one spanStore, so the two names are one lock.

type spanStore struct {
	mu    sync.RWMutex
	spans map[string]int
}

func (s *spanStore) ForEach(f func(string) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k := range s.spans {
		if err := f(k); err != nil {
			return err
		}
	}
	return nil
}

func (s *spanStore) ConfigFor(key string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.spans[key]
}

func (s *spanStore) Apply(key string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spans[key] = n
}

func verifyStore(store, reader *spanStore) error {
	return store.ForEach(func(k string) error { // want `RLock of spanStore.mu by spanStore.ForEach -> verifyStore.func1 -> spanStore.ConfigFor \(at twice.go:\d+\), the same lock: the program makes one spanStore \(at twice.go:\d+\), while already read-locked since twice.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
		_ = reader.ConfigFor(k)
		return nil
	})
}

// The fix reads the configurations first.
func verifyStoreFixed(store, reader *spanStore) error {
	keys := []string{}
	_ = store.ForEach(func(k string) error {
		keys = append(keys, k)
		return nil
	})
	for _, k := range keys {
		_ = reader.ConfigFor(k)
	}
	return nil
}

func runSpanStore() {
	st := &spanStore{spans: map[string]int{}}
	go st.Apply("a", 1)
	_ = verifyStore(st, st)
	_ = verifyStoreFixed(st, st)
}

// The same with the store's lock in a wrapper type (cockroach's
// syncutil.RWMutex): the wrapper's field is every holder's, so the one
// object is the store holding it, and the lock is named by its field.

type RWMutex struct{ sync.RWMutex }

type configStore struct {
	mu struct {
		RWMutex
		spans map[string]int
	}
}

func (s *configStore) ForEach(f func(string)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k := range s.mu.spans {
		f(k)
	}
}

func (s *configStore) ConfigFor(key string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.mu.spans[key]
}

func (s *configStore) Apply(key string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.spans[key] = n
}

func verifyConfigs(store, reader *configStore) {
	store.ForEach(func(k string) { // want `RLock of configStore.mu.RWMutex by configStore.ForEach -> verifyConfigs.func1 -> configStore.ConfigFor \(at twice.go:\d+\), the same lock: the program makes one configStore \(at twice.go:\d+\), while already read-locked since twice.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
		_ = reader.ConfigFor(k)
	})
}

func runConfigStore() {
	st := &configStore{}
	st.mu.spans = map[string]int{}
	go st.Apply("a", 1)
	verifyConfigs(st, st)
}
