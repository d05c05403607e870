// Project: ethereum/go-ethereum (les/clientpool.go, les/api.go), light server in geth v1.9.8
// Issue: ethereum/go-ethereum#20387 "Light client hangs when calling light server via json-rpc" (les.clientInfo), fixed by PR #20395 "les: fix clientInfo deadlock"
//
// Fixed twin: as in PR #20395, the forClients callback no longer calls the
// locking getPosBalance for a disconnected node; it reads the balance from the
// node database directly, since the pool lock is already held.
package main

import (
	"fmt"
	"sync"
	"time"
)

type ID [4]byte

func (id ID) String() string { return fmt.Sprintf("%x", id[:]) }

type AbsTime int64

func Now() AbsTime { return AbsTime(time.Now().UnixNano()) }

// ---- les/balance.go, les/clientdb (nodeDB) ----

type posBalance struct {
	value uint64
	meta  string
}

type balanceTracker struct {
	pos, neg uint64
}

func (bt *balanceTracker) getBalance(now AbsTime) (uint64, uint64) { return bt.pos, bt.neg }

type nodeDB struct {
	pos map[ID]posBalance
}

func (db *nodeDB) getOrNewPosBalance(id ID) posBalance {
	if b, ok := db.pos[id]; ok {
		return b
	}
	return posBalance{}
}

// ---- les/clientpool.go ----

type clientInfo struct {
	id              ID
	capacity        uint64
	connectedAt     AbsTime
	balanceTracker  balanceTracker
	balanceMetaInfo string
}

type clientPool struct {
	lock         sync.Mutex
	connectedMap map[ID]*clientInfo
	ndb          *nodeDB
	capLimit     uint64
}

// connect registers a new client (called from the LES peer handshake).
func (f *clientPool) connect(id ID, capacity uint64) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.connectedMap[id] = &clientInfo{id: id, capacity: capacity, connectedAt: Now()}
}

// forClients iterates through a list of clients, calling the callback for each one.
// If a client is not connected then clientInfo is nil. If the specified list is empty
// then the callback is called for all connected clients.
func (f *clientPool) forClients(ids []ID, callback func(*clientInfo, ID) error) error {
	f.lock.Lock()
	defer f.lock.Unlock()

	if len(ids) > 0 {
		for _, id := range ids {
			if err := callback(f.connectedMap[id], id); err != nil {
				return err
			}
		}
	} else {
		for _, c := range f.connectedMap {
			if err := callback(c, c.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// getPosBalance retrieves a single positive balance entry from cache or the database
func (f *clientPool) getPosBalance(id ID) posBalance {
	f.lock.Lock()
	defer f.lock.Unlock()

	return f.ndb.getOrNewPosBalance(id)
}

// ---- les/api.go ----

type LesServer struct {
	clientPool *clientPool
}

type PrivateLightServerAPI struct {
	server *LesServer
}

// ClientInfo returns information about clients listed in the ids list or matching the given tags
func (api *PrivateLightServerAPI) ClientInfo(ids []ID) map[ID]map[string]interface{} {
	res := make(map[ID]map[string]interface{})
	api.server.clientPool.forClients(ids, func(client *clientInfo, id ID) error {
		res[id] = api.clientInfo(client, id)
		return nil
	})
	return res
}

// clientInfo creates a client info data structure
func (api *PrivateLightServerAPI) clientInfo(c *clientInfo, id ID) map[string]interface{} {
	info := make(map[string]interface{})
	if c != nil {
		now := Now()
		info["isConnected"] = true
		info["connectionTime"] = float64(now-c.connectedAt) / float64(time.Second)
		info["capacity"] = c.capacity
		pb, nb := c.balanceTracker.getBalance(now)
		info["pricing/balance"], info["pricing/negBalance"] = pb, nb
		info["pricing/balanceMeta"] = c.balanceMetaInfo
		info["priority"] = pb != 0
	} else {
		info["isConnected"] = false
		// forClients already holds the pool lock: read the database directly.
		pb := api.server.clientPool.ndb.getOrNewPosBalance(id)
		info["pricing/balance"], info["pricing/balanceMeta"] = pb.value, pb.meta
		info["priority"] = pb.value != 0
	}
	return info
}

func main() {
	connected := ID{0x5c, 0x1a, 0x02, 0x9e}
	offline := ID{0xa7, 0x33, 0xf0, 0x11}

	pool := &clientPool{
		connectedMap: map[ID]*clientInfo{},
		ndb:          &nodeDB{pos: map[ID]posBalance{offline: {value: 100000, meta: "whatever"}}},
		capLimit:     1_000_000,
	}
	pool.connect(connected, 250_000)
	api := &PrivateLightServerAPI{server: &LesServer{clientPool: pool}}

	// les.addBalance(id, 100000, "whatever") was called for a node that is
	// not connected; now the operator runs les.clientInfo([id]).
	info := api.ClientInfo([]ID{connected, offline})
	for id, fields := range info {
		fmt.Println(id, fields["isConnected"], fields["pricing/balance"])
	}
}
