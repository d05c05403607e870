package sentinelerr

import (
	"errors"
	"sync"
)

// A helper that takes the backend's lock on one error only (a plugin
// that shut down is reconnected: `if err == ErrShutdown { b.Lock() ...
// }`), called under the backend's read lock with an error found not nil:
// on that failure's path it upgrades the read lock (vault's
// closeIfShutdown in pathCredsCreateRead). The same helper called after
// the read lock is let go is silent.
var ErrShutdown = errors.New("plugin is shut down")

type plugin interface {
	CreateUser(name string) (string, error)
}

type dbBackend struct {
	sync.RWMutex
	conns map[string]plugin
}

func (b *dbBackend) closeIfShutdown(name string, err error) {
	if err == ErrShutdown {
		b.Lock()
		delete(b.conns, name)
		b.Unlock()
	}
}

func (b *dbBackend) creds(name, user string) (string, error) {
	b.RLock()
	db := b.conns[name]
	pw, err := db.CreateUser(user)
	if err != nil {
		b.closeIfShutdown(name, err) // want `Lock of dbBackend.RWMutex by dbBackend.closeIfShutdown \(at sentinel.go:\d+\), taken there where the error of CreateUser is sentinelerr.ErrShutdown, a failure it may be here, where it is not nil, while read-locked since sentinel.go:\d+: a read lock cannot be upgraded, this deadlocks \[lock-upgrade\]`
		b.RUnlock()
		return "", err
	}
	b.RUnlock()
	return pw, nil
}

func (b *dbBackend) credsFixed(name, user string) (string, error) {
	b.RLock()
	db := b.conns[name]
	b.RUnlock()
	pw, err := db.CreateUser(user)
	if err != nil {
		b.closeIfShutdown(name, err)
		return "", err
	}
	return pw, nil
}
