// Project: cortex (pkg/ring/ring.go)
// Bug: Ring.shuffleShard() holds r.mtx.RLock() while building the subring and
// then calls the exported r.InstancesCount(), which takes r.mtx.RLock() again.
// If the KV watcher's updateRingState() requests r.mtx.Lock() between the two
// read locks, the nested RLock queues behind the pending writer, which in turn
// waits for the outer RLock: distributor pushes and ring updates both hang.
// Fix: inside the locked section use the unlocked field
// (len(r.ringDesc.Ingesters)) instead of the exported, locking accessor.

package b21cortexring

import (
	"hash/fnv"
	"sort"
	"sync"
	"testing"
	"time"
)

type InstanceState int

const (
	ACTIVE InstanceState = iota
	LEAVING
	PENDING
)

type InstanceDesc struct {
	Addr      string
	Timestamp int64
	State     InstanceState
	Tokens    []uint32
	Zone      string
}

type Desc struct {
	Ingesters map[string]InstanceDesc
}

type Ring struct {
	key                  string
	mtx                  sync.RWMutex
	ringDesc             *Desc
	ringTokens           []uint32
	ringZones            []string
	lastTopologyChange   time.Time
	shuffledSubringCache map[string]*Ring
}

func NewRing(key string, desc *Desc) *Ring {
	r := &Ring{key: key, shuffledSubringCache: make(map[string]*Ring)}
	r.setDesc(desc)
	return r
}

func (r *Ring) setDesc(d *Desc) {
	r.ringDesc = d
	r.ringTokens = r.ringTokens[:0]
	zones := map[string]struct{}{}
	for _, ing := range d.Ingesters {
		r.ringTokens = append(r.ringTokens, ing.Tokens...)
		zones[ing.Zone] = struct{}{}
	}
	sort.Slice(r.ringTokens, func(i, j int) bool { return r.ringTokens[i] < r.ringTokens[j] })
	r.ringZones = r.ringZones[:0]
	for z := range zones {
		r.ringZones = append(r.ringZones, z)
	}
	sort.Strings(r.ringZones)
	r.lastTopologyChange = time.Now()
}

// updateRingState is called by the KV store watcher on every ring change.
func (r *Ring) updateRingState(ringDesc *Desc) {
	r.mtx.Lock()
	defer r.mtx.Unlock()

	r.setDesc(ringDesc)
	r.shuffledSubringCache = make(map[string]*Ring)
}

func (r *Ring) InstancesCount() int {
	r.mtx.RLock()
	defer r.mtx.RUnlock()
	return len(r.ringDesc.Ingesters)
}

func (r *Ring) ShuffleShard(identifier string, size int) *Ring {
	r.mtx.RLock()
	cached := r.shuffledSubringCache[identifier]
	r.mtx.RUnlock()
	if cached != nil {
		return cached
	}
	result := r.shuffleShard(identifier, size)

	r.mtx.Lock()
	r.shuffledSubringCache[identifier] = result
	r.mtx.Unlock()
	return result
}

func (r *Ring) shuffleShard(identifier string, size int) *Ring {
	r.mtx.RLock()
	defer r.mtx.RUnlock()

	h := fnv.New64a()
	h.Write([]byte(identifier))
	seed := h.Sum64()

	names := make([]string, 0, len(r.ringDesc.Ingesters))
	for name := range r.ringDesc.Ingesters {
		names = append(names, name)
	}
	sort.Strings(names)
	time.Sleep(30 * time.Millisecond) // walk the token ring per zone

	// Use all instances if the shard would cover the whole ring.
	if size <= 0 || r.InstancesCount() <= size {
		return r
	}
	shard := &Desc{Ingesters: make(map[string]InstanceDesc, size)}
	for i := 0; i < size; i++ {
		name := names[(int(seed%uint64(len(names)))+i)%len(names)]
		shard.Ingesters[name] = r.ringDesc.Ingesters[name]
	}
	sub := &Ring{key: r.key, shuffledSubringCache: make(map[string]*Ring)}
	sub.setDesc(shard)
	return sub
}

func testDesc(n int) *Desc {
	d := &Desc{Ingesters: make(map[string]InstanceDesc)}
	for i := 0; i < n; i++ {
		name := string(rune('a' + i))
		d.Ingesters["ingester-"+name] = InstanceDesc{
			Addr: "10.0.0." + name, State: ACTIVE, Zone: "zone-" + string(rune('a'+i%3)),
			Tokens: []uint32{uint32(i * 1000), uint32(i*1000 + 500)},
		}
	}
	return d
}

func TestShuffleShardDuringRingUpdate(t *testing.T) {
	r := NewRing("ring", testDesc(6))

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // distributor push path
		defer wg.Done()
		_ = r.ShuffleShard("tenant-1", 3)
	}()
	go func() { // KV watch loop
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		r.updateRingState(testDesc(7))
	}()
	wg.Wait()
}
