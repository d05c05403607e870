package perkey

import (
	"errors"
	"sync"
)

// A lock table whose lock call fails before it locks anything (an unknown
// release) and otherwise returns holding the key's lock: the caller holds
// that lock where the call succeeded, as for a helper that always takes
// it. Blocking on the key's lock under the table's own lock, when the
// unlock half takes the table's lock first, deadlocks the first holder's
// unlock against the second locker (helm's Tiller release locks).

var errUnknown = errors.New("unknown release")

type Releases struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
	known map[string]bool
}

func (r *Releases) Lock(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.known[name] {
		return errUnknown
	}
	l, ok := r.locks[name]
	if !ok {
		l = &sync.Mutex{}
		r.locks[name] = l
	}
	l.Lock()
	return nil
}

func (r *Releases) Unlock(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.locks[name]; ok {
		l.Unlock()
	}
}

func (r *Releases) Upgrade(name string) error {
	if err := r.Lock(name); err != nil {
		return err
	}
	defer r.Unlock(name) // want `lock order inversion: Releases.mu then Releases.locks\[\] in Releases.Lock \(onsuccess.go:\d+ -> onsuccess.go:\d+\) but Releases.locks\[\] then Releases.mu in Releases.Upgrade`
	return nil
}

// The fix: find the key's lock under the table's lock, wait for it after.
type FixedReleases struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
	known map[string]bool
}

func (r *FixedReleases) lookup(name string) (*sync.Mutex, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.known[name] {
		return nil, errUnknown
	}
	l, ok := r.locks[name]
	if !ok {
		l = &sync.Mutex{}
		r.locks[name] = l
	}
	return l, nil
}

func (r *FixedReleases) Lock(name string) error {
	l, err := r.lookup(name)
	if err != nil {
		return err
	}
	l.Lock()
	return nil
}

func (r *FixedReleases) Unlock(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.locks[name]; ok {
		l.Unlock()
	}
}

func (r *FixedReleases) Upgrade(name string) error {
	if err := r.Lock(name); err != nil {
		return err
	}
	defer r.Unlock(name)
	return nil
}
