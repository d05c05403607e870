// Package symmetric: two locks of one class reached the same way from two
// parameters of one type are taken in the order the caller passes them;
// two calls at once with the arguments swapped deadlock.
package symmetric

import (
	"sync"
)

// Per-directory locks, by inode.
type inodeLocks struct {
	mu    sync.Mutex
	locks map[uint64]*sync.Mutex
}

func (il *inodeLocks) get(inode uint64) *sync.Mutex {
	il.mu.Lock()
	defer il.mu.Unlock()
	l, ok := il.locks[inode]
	if !ok {
		l = &sync.Mutex{}
		il.locks[inode] = l
	}
	return l
}

type FS struct {
	dirLocks inodeLocks
	moves    int
}

// Rename locks the old directory, then the new one: renaming a file from
// A to B while another goes from B to A deadlocks.
func (fs *FS) Rename(oldDir uint64, oldName string, newDir uint64, newName string) {
	oldLock := fs.dirLocks.get(oldDir)
	oldLock.Lock()
	defer oldLock.Unlock()
	if newDir != oldDir {
		newLock := fs.dirLocks.get(newDir)
		newLock.Lock() // want `lock order by argument: FS.Rename holds the inodeLocks.locks\[\] of oldDir \(args.go:36\) and takes the inodeLocks.locks\[\] of newDir: two calls at once with the arguments swapped deadlock \[lock-order\]`
		defer newLock.Unlock()
	}
	fs.moves++
}

// A lock array chosen by hash, the from side an element of a slice.
type entry struct {
	sync.RWMutex
}

type Store struct {
	locks [256]*entry
}

func index(key string) uint8 { return uint8(len(key)) }

func (s *Store) Merge(to string, from []string) {
	toLock := s.locks[index(to)]
	toLock.Lock()
	defer toLock.Unlock()
	for _, f := range from {
		fromLock := s.locks[index(f)]
		if fromLock != toLock {
			fromLock.Lock() // want `lock order by argument: Store.Merge holds the entry.RWMutex of to \(args.go:59\) and takes the entry.RWMutex of an element of from: two calls at once with the arguments swapped deadlock \[lock-order\]`
			fromLock.Unlock()
		}
	}
}

// Account: a transfer locks the source, then the destination.
type Account struct {
	mu      sync.Mutex
	balance int
}

func Transfer(src, dst *Account, n int) {
	src.mu.Lock()
	defer src.mu.Unlock()
	dst.mu.Lock() // want `lock order by argument: Transfer holds the Account.mu of src \(args.go:77\) and takes the Account.mu of dst`
	defer dst.mu.Unlock()
	src.balance -= n
	dst.balance += n
}

// The correct counterparts. RenameOrdered locks in inode order;
// TransferSerialized holds a bank-wide lock across both; Snapshot only
// read-locks both, and two readers wait for no one.
func (fs *FS) RenameOrdered(oldDir uint64, oldName string, newDir uint64, newName string) {
	first, second := oldDir, newDir
	if first > second {
		first, second = second, first
	}
	firstLock := fs.dirLocks.get(first)
	firstLock.Lock()
	defer firstLock.Unlock()
	if second != first {
		secondLock := fs.dirLocks.get(second)
		secondLock.Lock()
		defer secondLock.Unlock()
	}
	fs.moves++
}

var bank sync.Mutex

func TransferSerialized(src, dst *Account, n int) {
	bank.Lock()
	defer bank.Unlock()
	src.mu.Lock()
	defer src.mu.Unlock()
	dst.mu.Lock()
	defer dst.mu.Unlock()
	src.balance -= n
	dst.balance += n
}

func (s *Store) Snapshot(a, b string) {
	la, lb := s.locks[index(a)], s.locks[index(b)]
	la.RLock()
	defer la.RUnlock()
	lb.RLock()
	defer lb.RUnlock()
}
