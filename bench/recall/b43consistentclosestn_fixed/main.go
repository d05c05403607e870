// Fixed twin (the fix for #23 applied).
// Project: buraksezer/consistent v0.9.0 (bounded-load consistent hashing, the
// partition/replica placement under the Olric distributed cache), 2022.
// File: consistent.go: Consistent.GetClosestN, getClosestN, GetPartitionOwner, Add.
// Issue: buraksezer/consistent#23 "[Bug] RLock called twice in GetClosestN and
// cause the deadlock" (Nov 2022); fixed by giving getClosestN the unexported,
// lock-free getPartitionOwner.
//
// GetClosestN hashes the key to a partition and calls getClosestN, which
// read-locks c.mu for the whole computation of the replica owners. To find
// where on the ring to start it asks the exported GetPartitionOwner for the
// partition's owner, and GetPartitionOwner read-locks c.mu again. sync.RWMutex
// is writer-preferring: when a member joins or leaves (Add/Remove take c.mu
// for writing to redistribute the partitions) between the two read locks, the
// writer waits for the first read lock and the nested read lock waits for the
// writer, so the lookup, the membership change and every later lookup block
// forever. The fix adds getPartitionOwner, which expects the caller to hold
// the lock, and uses it inside getClosestN.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"time"
)

var ErrInsufficientMemberCount = errors.New("insufficient member count")

type Hasher interface{ Sum64([]byte) uint64 }

// Member interface represents a member in consistent hash ring.
type Member interface{ String() string }

type Config struct {
	Hasher                            Hasher
	PartitionCount, ReplicationFactor int
	Load                              float64
}

// Consistent holds the information about the members of the consistent hash circle.
type Consistent struct {
	mu             sync.RWMutex
	config         Config
	hasher         Hasher
	sortedSet      []uint64
	partitionCount uint64
	members        map[string]*Member
	partitions     map[int]*Member
	ring           map[uint64]*Member
}

// New creates and returns a new Consistent object.
func New(members []Member, config Config) *Consistent {
	c := &Consistent{config: config, members: make(map[string]*Member), partitionCount: uint64(config.PartitionCount),
		ring: make(map[uint64]*Member), hasher: config.Hasher}
	for _, member := range members {
		c.add(member)
	}
	c.distributePartitions()
	return c
}

// distributePartitions recomputes the owner of every partition (v0.9.0 also
// bounds each member's load; elided here).
func (c *Consistent) distributePartitions() {
	partitions := make(map[int]*Member)
	bs := make([]byte, 8)
	for partID := uint64(0); partID < c.partitionCount; partID++ {
		binary.LittleEndian.PutUint64(bs, partID)
		key := c.hasher.Sum64(bs)
		idx := sort.Search(len(c.sortedSet), func(i int) bool { return c.sortedSet[i] >= key }) % len(c.sortedSet)
		partitions[int(partID)] = c.ring[c.sortedSet[idx]]
	}
	c.partitions = partitions
}

func (c *Consistent) add(member Member) {
	for i := 0; i < c.config.ReplicationFactor; i++ {
		h := c.hasher.Sum64([]byte(fmt.Sprintf("%s%d", member.String(), i)))
		c.ring[h] = &member
		c.sortedSet = append(c.sortedSet, h)
	}
	sort.Slice(c.sortedSet, func(i int, j int) bool { return c.sortedSet[i] < c.sortedSet[j] })
	c.members[member.String()] = &member
}

// Add adds a new member to the consistent hash circle.
func (c *Consistent) Add(member Member) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.members[member.String()]; ok {
		return
	}
	c.add(member)
	c.distributePartitions()
}

// FindPartitionID returns partition id for given key.
func (c *Consistent) FindPartitionID(key []byte) int {
	return int(c.hasher.Sum64(key) % c.partitionCount)
}

// GetPartitionOwner returns the owner of the given partition.
func (c *Consistent) GetPartitionOwner(partID int) Member {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.getPartitionOwner(partID)
}

// getPartitionOwner returns the owner of the given partition. It's not thread-safe.
func (c *Consistent) getPartitionOwner(partID int) Member {
	member, ok := c.partitions[partID]
	if !ok {
		return nil
	}
	// Create a thread-safe copy of member and return it.
	return *member
}

func (c *Consistent) getClosestN(partID, count int) ([]Member, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	res := []Member{}
	if count > len(c.members) {
		return res, ErrInsufficientMemberCount
	}

	// Preemption point between the two read locks: a member joining the
	// cluster right now queues its write lock here.
	time.Sleep(50 * time.Millisecond)

	var ownerKey uint64
	owner := c.getPartitionOwner(partID)
	// Hash and sort all the names.
	keys := []uint64{}
	kmems := make(map[uint64]*Member)
	for name, member := range c.members {
		key := c.hasher.Sum64([]byte(name))
		if name == owner.String() {
			ownerKey = key
		}
		keys = append(keys, key)
		kmems[key] = member
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })

	// Find the key owner
	idx := 0
	for idx < len(keys) {
		if keys[idx] == ownerKey {
			res = append(res, *kmems[keys[idx]])
			break
		}
		idx++
	}

	// Find the closest(replica owners) members.
	for len(res) < count {
		idx = (idx + 1) % len(keys)
		res = append(res, *kmems[keys[idx]])
	}
	return res, nil
}

// GetClosestN returns the closest N member to a key in the hash ring.
// This may be useful to find members for replication.
func (c *Consistent) GetClosestN(key []byte, count int) ([]Member, error) {
	return c.getClosestN(c.FindPartitionID(key), count)
}

type hasher struct{}

func (hasher) Sum64(data []byte) uint64 { h := fnv.New64a(); h.Write(data); return h.Sum64() }

type member string

func (m member) String() string { return string(m) }

func main() {
	cfg := Config{PartitionCount: 71, ReplicationFactor: 20, Load: 1.25, Hasher: hasher{}}
	c := New([]Member{member("olric-0:3320"), member("olric-1:3320"), member("olric-2:3320")}, cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A DMap Put looks up the primary and backup owners of its key.
		owners, err := c.GetClosestN([]byte("session:8f14e45f"), 2)
		fmt.Println("replica owners:", owners, err)
	}()

	time.Sleep(10 * time.Millisecond)
	go c.Add(member("olric-3:3320")) // a node joins the cluster
	<-done
	time.Sleep(10 * time.Millisecond)
	fmt.Println("owner after join:", c.GetPartitionOwner(c.FindPartitionID([]byte("session:8f14e45f"))))
}
