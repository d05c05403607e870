package leak

import "sync"

// A lock taken under a condition and released under the same test is
// held, at a return between the two, exactly where the condition holds
// (kubernetes' scheduler leaving the equivalence cache locked on a
// predicate's error).
type ECache struct {
	sync.RWMutex
	results map[string]bool
}

func (c *ECache) lookup(key string) (fit, found bool) {
	fit, found = c.results[key]
	return fit, found
}

func fits(key string, ecache *ECache, predicate func() (bool, error)) (bool, error) {
	cached := ecache != nil
	var fit, found bool
	if cached {
		ecache.Lock()
		fit, found = ecache.lookup(key)
	}
	if !cached || !found {
		var err error
		fit, err = predicate()
		if err != nil {
			return false, err // want `ECache.RWMutex taken at condlock.go:\d+ is still held on this return path where ecache != nil \(other paths release it\) \[lock-leak\]`
		}
		if cached {
			ecache.results[key] = fit
		}
	}
	if cached {
		ecache.Unlock()
	}
	return fit, nil
}

// fitsReleased unlocks before its error return. Silent.
func fitsReleased(key string, ecache *ECache, predicate func() (bool, error)) (bool, error) {
	cached := ecache != nil
	var fit, found bool
	if cached {
		ecache.Lock()
		fit, found = ecache.lookup(key)
	}
	if !cached || !found {
		var err error
		fit, err = predicate()
		if err != nil {
			if cached {
				ecache.Unlock()
			}
			return false, err
		}
	}
	if cached {
		ecache.Unlock()
	}
	return fit, nil
}

// fitsDeferred defers the unlock with the lock. Silent.
func fitsDeferred(key string, ecache *ECache, predicate func() (bool, error)) (bool, error) {
	if ecache != nil {
		ecache.Lock()
		defer ecache.Unlock()
		if fit, found := ecache.lookup(key); found {
			return fit, nil
		}
	}
	return predicate()
}

// notifyLocked is called with the lock held; on a branch it lets the lock
// go around a callback and takes it back: the caller's lock, not a leak.
// Silent.
func (c *ECache) notifyLocked(cb func()) error {
	if cb != nil {
		c.Unlock()
		cb()
		c.Lock()
	}
	return nil
}

// rotate lets the caller's lock go and takes it back.
func (c *ECache) rotate() {
	c.Unlock()
	c.results = map[string]bool{}
	c.Lock()
}

// rotateLocked does it through a helper on a branch. Silent.
func (c *ECache) rotateLocked(full bool) error {
	if full {
		c.rotate()
	}
	return nil
}
