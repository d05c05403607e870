package callbackparam

import "sync"

// A literal passed to a helper that runs it under a lock is the caller's
// own code: a take on one of its branches re-locks the lock the helper
// holds, as a Lock written on that branch would (coredns' CNAME chase in
// a withRLock closure). What it calls must still take the lock for sure.
type Zone struct {
	mu      sync.RWMutex
	records map[string][]string
	strict  bool
}

func withRLock(mu *sync.RWMutex, f func()) {
	mu.RLock()
	defer mu.RUnlock()
	f()
}

func (z *Zone) chase(name string) []string {
	z.mu.RLock()
	defer z.mu.RUnlock()
	return z.records[name]
}

// maybeChase read-locks only when strict is set, a value not followed.
func (z *Zone) maybeChase(name string) []string {
	if !z.strict {
		return nil
	}
	return z.chase(name)
}

func (z *Zone) Lookup(name string) []string {
	var out []string
	withRLock(&z.mu, func() { // want `RLock of Zone.mu by withRLock -> Zone.Lookup.func1 -> Zone.chase \(at literal.go:\d+\) while already read-locked since literal.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
		for _, t := range z.records[name] {
			if t != "" {
				out = append(out, z.chase(t)...)
			}
		}
	})
	return out
}

// LookupFixed reads the targets under the lock and chases them after.
// Silent.
func (z *Zone) LookupFixed(name string) []string {
	var targets, out []string
	withRLock(&z.mu, func() { targets = z.records[name] })
	for _, t := range targets {
		out = append(out, z.chase(t)...)
	}
	return out
}

// LookupMaybe calls a helper that read-locks on the paths that call the
// always-locking chase: as for a direct call of it under the lock
// (relockSomePaths), a double lock on those paths.
func (z *Zone) LookupMaybe(name string) []string {
	var out []string
	withRLock(&z.mu, func() { // want `RLock of Zone.mu by withRLock -> Zone.LookupMaybe.func1 -> Zone.maybeChase -> Zone.chase \(at literal.go:22, on the paths that call Zone.chase\) while already read-locked since literal.go:16: deadlocks behind a waiting writer \[double-lock\]`
		out = z.maybeChase(name)
	})
	return out
}

func (z *Zone) Reload(recs map[string][]string) {
	z.mu.Lock()
	z.records = recs
	z.mu.Unlock()
}
