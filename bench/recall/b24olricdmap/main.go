// Project: buraksezer/olric (internal/dmap/get.go, delete.go, fragment.go)
// Bug: getOnFragment holds the fragment's RLock while it finds an expired entry and
// calls dm.deleteOnFragment to evict it lazily; deleteOnFragment takes the same
// fragment's write Lock -> RLock-to-Lock upgrade on one goroutine.
// Fix: release the read lock before evicting the expired key.
package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log"
	"sync"
	"time"
)

var ErrKeyNotFound = errors.New("key not found")

type Entry struct {
	Key       string
	Value     []byte
	TTL       int64
	Timestamp int64
}

func (e *Entry) String() string {
	return fmt.Sprintf("entry{key=%s, ttl=%d, ts=%d}", e.Key, e.TTL, e.Timestamp)
}

func isKeyExpired(ttl int64) bool {
	if ttl == 0 {
		return false
	}
	return time.Now().UnixNano()/1000000 >= ttl
}

type fragment struct {
	sync.RWMutex
	storage map[uint64]*Entry
	stats   struct{ deleteHits, getHits int }
}

type Partition struct {
	id        uint64
	mtx       sync.Mutex
	fragments map[string]*fragment
}

func (p *Partition) fragment(name string) *fragment {
	p.mtx.Lock()
	defer p.mtx.Unlock()
	f, ok := p.fragments[name]
	if !ok {
		f = &fragment{storage: make(map[uint64]*Entry)}
		p.fragments[name] = f
	}
	return f
}

type Config struct {
	PartitionCount    uint64
	JanitorInterval   time.Duration
	MaxIdleDuration   time.Duration
	ReplicationFactor int
}

type Service struct {
	config     Config
	partitions []*Partition
	dmaps      sync.Map
	done       chan struct{}
}

func NewService(c Config) *Service {
	s := &Service{config: c, done: make(chan struct{})}
	for i := uint64(0); i < c.PartitionCount; i++ {
		s.partitions = append(s.partitions, &Partition{id: i, fragments: map[string]*fragment{}})
	}
	go s.janitor()
	return s
}

func (s *Service) janitor() {
	t := time.NewTicker(s.config.JanitorInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
	}
}

func (s *Service) Shutdown() { close(s.done) }

type DMap struct {
	name string
	s    *Service
}

func (s *Service) NewDMap(name string) (*DMap, error) {
	if name == "" {
		return nil, errors.New("empty dmap name")
	}
	dm := &DMap{name: name, s: s}
	s.dmaps.Store(name, dm)
	return dm, nil
}

func (dm *DMap) hkey(key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(dm.name + key))
	return h.Sum64()
}

func (dm *DMap) getFragment(hkey uint64) *fragment {
	part := dm.s.partitions[hkey%dm.s.config.PartitionCount]
	return part.fragment(dm.name)
}

func (dm *DMap) Put(key string, value []byte, timeout time.Duration) error {
	hkey := dm.hkey(key)
	f := dm.getFragment(hkey)
	f.Lock()
	defer f.Unlock()
	e := &Entry{Key: key, Value: value, Timestamp: time.Now().UnixNano()}
	if timeout > 0 {
		e.TTL = (time.Now().UnixNano() + timeout.Nanoseconds()) / 1000000
	}
	f.storage[hkey] = e
	return nil
}

func (dm *DMap) deleteOnFragment(hkey uint64) {
	f := dm.getFragment(hkey)
	f.Lock()
	defer f.Unlock()
	delete(f.storage, hkey)
	f.stats.deleteHits++
}

func (dm *DMap) getOnFragment(hkey uint64) (*Entry, error) {
	f := dm.getFragment(hkey)
	f.RLock()
	defer f.RUnlock()
	e, ok := f.storage[hkey]
	if !ok {
		return nil, ErrKeyNotFound
	}
	if isKeyExpired(e.TTL) {
		log.Printf("olric: evicting expired %v from %s", e, dm.name)
		dm.deleteOnFragment(hkey)
		return nil, ErrKeyNotFound
	}
	return e, nil
}

func (dm *DMap) Get(key string) ([]byte, error) {
	e, err := dm.getOnFragment(dm.hkey(key))
	if err != nil {
		return nil, err
	}
	return e.Value, nil
}

func main() {
	s := NewService(Config{PartitionCount: 7, JanitorInterval: time.Second, ReplicationFactor: 1})
	defer s.Shutdown()
	dm, err := s.NewDMap("sessions")
	if err != nil {
		log.Fatal(err)
	}
	if err := dm.Put("session:42", []byte("token"), 20*time.Millisecond); err != nil {
		log.Fatal(err)
	}
	v, err := dm.Get("session:42")
	fmt.Printf("before expiry: %s %v\n", v, err)
	time.Sleep(40 * time.Millisecond)
	_, err = dm.Get("session:42")
	fmt.Println("after expiry:", err)
}
