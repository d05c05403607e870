// Project: github.com/tidwall/buntdb
// Bug: the background manager invoked the user's Config.OnExpired callback from inside
// its db.Update closure; OnExpired is documented to delete the keys itself (with
// db.Update), so Update -> managed(true) -> Begin(true) -> tx.lock() takes db.mu
// exclusively a second time: the `writable` constant true selects mu.Lock and the
// background goroutine self-deadlocks.
// Fix: collect the expired keys inside Update and call onExpired after Update returns.

package b20buntdbexpire_fixed

import (
	"errors"
	"sort"
	"sync"
	"testing"
	"time"
)

var (
	ErrTxNotWritable  = errors.New("tx not writable")
	ErrDatabaseClosed = errors.New("database closed")
	ErrNotFound       = errors.New("not found")
)

type Config struct {
	AutoShrinkPercentage int
	AutoShrinkMinSize    int
	OnExpired            func(keys []string)
}

type dbItem struct {
	key, val string
	expires  time.Time
}

type DB struct {
	mu       sync.RWMutex
	keys     map[string]*dbItem
	closed   bool
	config   Config
	bgTick   time.Duration
	flushes  int
	shrinkCh chan struct{}
}

type Tx struct {
	db       *DB
	writable bool
	funcd    bool
}

func Open(cfg Config, tick time.Duration) *DB {
	db := &DB{keys: map[string]*dbItem{}, config: cfg, bgTick: tick, shrinkCh: make(chan struct{}, 1)}
	go db.backgroundManager()
	return db
}

func (tx *Tx) lock() {
	if tx.writable {
		tx.db.mu.Lock()
	} else {
		tx.db.mu.RLock()
	}
}

func (tx *Tx) unlock() {
	if tx.writable {
		tx.db.mu.Unlock()
	} else {
		tx.db.mu.RUnlock()
	}
}

func (db *DB) Begin(writable bool) (*Tx, error) {
	tx := &Tx{db: db, writable: writable}
	tx.lock()
	if db.closed {
		tx.unlock()
		return nil, ErrDatabaseClosed
	}
	return tx, nil
}

func (db *DB) managed(writable bool, fn func(tx *Tx) error) error {
	tx, err := db.Begin(writable)
	if err != nil {
		return err
	}
	defer tx.unlock()
	tx.funcd = true
	defer func() { tx.funcd = false }()
	return fn(tx)
}

func (db *DB) View(fn func(tx *Tx) error) error   { return db.managed(false, fn) }
func (db *DB) Update(fn func(tx *Tx) error) error { return db.managed(true, fn) }

func (tx *Tx) Set(key, val string, ttl time.Duration) error {
	if !tx.writable {
		return ErrTxNotWritable
	}
	tx.db.keys[key] = &dbItem{key: key, val: val, expires: time.Now().Add(ttl)}
	return nil
}

func (tx *Tx) Delete(key string) (string, error) {
	if !tx.writable {
		return "", ErrTxNotWritable
	}
	item, ok := tx.db.keys[key]
	if !ok {
		return "", ErrNotFound
	}
	delete(tx.db.keys, key)
	return item.val, nil
}

func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrDatabaseClosed
	}
	db.closed = true
	return nil
}

// backgroundManager runs continuously in the background and performs various
// operations such as removing expired items and syncing to disk.
func (db *DB) backgroundManager() {
	t := time.NewTicker(db.bgTick)
	defer t.Stop()
	for range t.C {
		var onExpired func([]string)
		var expired []string
		err := db.Update(func(tx *Tx) error {
			onExpired = tx.db.config.OnExpired
			for k, item := range tx.db.keys {
				if time.Now().After(item.expires) {
					expired = append(expired, k)
				}
			}
			sort.Strings(expired)
			if onExpired == nil {
				for _, k := range expired {
					_, _ = tx.Delete(k)
				}
			}
			tx.db.flushes++
			return nil
		})
		if err == ErrDatabaseClosed {
			return
		}
		// send expired event, if needed
		if onExpired != nil && len(expired) > 0 {
			onExpired(expired)
		}
	}

}

func TestOnExpiredDeletesKeys(t *testing.T) {
	deleted := make(chan []string, 1)
	var db *DB
	cfg := Config{AutoShrinkPercentage: 100, AutoShrinkMinSize: 32 * 1024 * 1024}
	cfg.OnExpired = func(keys []string) {
		_ = db.Update(func(tx *Tx) error {
			for _, k := range keys {
				_, _ = tx.Delete(k)
			}
			return nil
		})
		deleted <- keys
	}
	db = Open(cfg, 20*time.Millisecond)
	defer db.Close()
	_ = db.Update(func(tx *Tx) error { return tx.Set("session:1", "alice", time.Millisecond) })

	if keys := <-deleted; len(keys) != 1 {
		t.Fatalf("unexpected expired keys %v", keys)
	}
}
