// etcd_ok: modeled on etcd, where mvcc ranges consult the auth store. Store
// holds Store.mu.RLock while calling Checker.Allowed (which RLocks
// authStore.rw), and authStore.revision holds authStore.rw.RLock while calling
// Store.Get (RLock). Correct: authStore.rw is only ever read-locked (the
// permission table is built before the store is shared and never changed),
// so no writer can ever queue on it and the read-read cycle cannot block.
package main

import (
	"fmt"
	"strings"
	"sync"

	"example.com/recall/xpkg_etcd_ok/kv"
)

type authStore struct {
	rw    sync.RWMutex // read-only after construction; no writer exists
	perms map[string]string
	kv    *kv.Store
}

// Allowed implements kv.Checker.
func (a *authStore) Allowed(user, key string) bool {
	a.rw.RLock()
	defer a.rw.RUnlock()
	p, ok := a.perms[user]
	return ok && strings.HasPrefix(key, p)
}

func (a *authStore) revision(user string) string {
	a.rw.RLock()
	defer a.rw.RUnlock()
	v, _ := a.kv.Get("rev/" + a.perms[user])
	return v
}

func main() {
	a := &authStore{perms: map[string]string{"alice": "/app/", "bob": "/ops/"}}
	a.kv = kv.New(a)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(3)
		go func() { defer wg.Done(); a.kv.Put(fmt.Sprintf("/app/k%d", i), "v") }()
		go func() { defer wg.Done(); fmt.Println(a.kv.Range("alice", "/app/")) }()
		go func() { defer wg.Done(); _ = a.revision("bob") }()
	}
	wg.Wait()
}
