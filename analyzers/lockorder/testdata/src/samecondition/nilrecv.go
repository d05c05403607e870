package samecondition

import "sync"

// A method that tolerates a nil receiver (`if a == nil { return "" }`)
// takes the lock on every path where it has an object; a caller that
// holds the object's lock has one, so the read lock is taken again
// (nats-server's accountInfo calling getNameTag).
type Account struct {
	mu   sync.RWMutex
	name string
	tag  string
}

func (a *Account) NameTag() string {
	if a == nil {
		return ""
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.tag != "" {
		return a.tag
	}
	return a.name
}

func (a *Account) Info() string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.name + "/" + a.NameTag() // want `RLock of Account.mu by Account.NameTag \(at nilrecv.go:19\) while already read-locked since nilrecv.go:28: deadlocks behind a waiting writer \[double-lock\]`
}

// InfoFixed reads the tag before it locks. Silent.
func (a *Account) InfoFixed() string {
	tag := a.NameTag()
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.name + "/" + tag
}

// Another account's tag, under this one's lock: another object. Silent.
func (a *Account) Linked(b *Account) string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.name + "->" + b.NameTag()
}

func (a *Account) Rename(n string) {
	a.mu.Lock()
	a.name = n
	a.mu.Unlock()
}
