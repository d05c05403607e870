package branches

import (
	"sync"
	"time"
)

// `v, ok := x.(T)` names x where ok holds, and two such tests of one
// value agree: a lock taken under one and released under the other
// balances (a nats-server test pauses whichever store a stream has).

type Storage interface{ Expire() }

type fileStore struct{ mu sync.Mutex }
type memStore struct{ mu sync.Mutex }

func (*fileStore) Expire() {}
func (*memStore) Expire()  {}

type Stream struct{ store Storage }

// pause locks the store's lock, sleeps, unlocks it. Silent.
func pause(st *Stream) {
	if fs, ok := st.store.(*fileStore); ok {
		fs.mu.Lock()
	} else if ms, ok := st.store.(*memStore); ok {
		ms.mu.Lock()
	}
	time.Sleep(time.Millisecond)
	if fs, ok := st.store.(*fileStore); ok {
		fs.mu.Unlock()
	} else if ms, ok := st.store.(*memStore); ok {
		ms.mu.Unlock()
	}
}

// pauseFile forgets the memory store's unlock.
func pauseFile(st *Stream) { // want `the function returns with different locks held on different paths: memStore.mu \(taken at typeassert.go:\d+\) held on some return paths only \[inconsistent-return\]`
	if fs, ok := st.store.(*fileStore); ok {
		fs.mu.Lock()
	} else if ms, ok := st.store.(*memStore); ok {
		ms.mu.Lock()
	}
	time.Sleep(time.Millisecond)
	if fs, ok := st.store.(*fileStore); ok {
		fs.mu.Unlock()
	}
}
