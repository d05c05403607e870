package looprelock

import "sync"

// A branch where two pointers compare equal makes a lock held through
// one held through the other, for this iteration only (nats-server's
// configureAccounts: `if si.acc == acc { continue }` before locking
// si.acc): the next iteration compares new values.

type Account struct {
	mu      sync.RWMutex
	imports []*Import
	exports map[string]int
}

type Import struct {
	acc *Account
	to  string
	se  int
}

func (a *Account) export(to string) int { return a.exports[to] }

// resolve skips its own account before read-locking the other. Silent.
func resolve(accs []*Account) {
	for _, acc := range accs {
		acc.mu.Lock()
		for _, si := range acc.imports {
			if si.acc == acc {
				si.se = acc.export(si.to)
				continue
			}
			si.acc.mu.RLock()
			si.se = si.acc.export(si.to)
			si.acc.mu.RUnlock()
		}
		acc.mu.Unlock()
	}
}

// resolveSelf read-locks the account it holds when it imports itself.
func resolveSelf(accs []*Account) {
	for _, acc := range accs {
		acc.mu.Lock()
		for _, si := range acc.imports {
			if si.acc == acc {
				si.acc.mu.RLock() // want `Account.mu locked again while held since alias.go:\d+: self-deadlock \[double-lock\]`
				si.se = si.acc.export(si.to)
				si.acc.mu.RUnlock()
			}
		}
		acc.mu.Unlock()
	}
}
