// Command b67libovsdbreconnect reproduces the shape of a double-lock
// deadlock shipped in ovn-org/libovsdb, the OVSDB client of ovn-kubernetes,
// fixed by libovsdb PR #267 ("Fixes deadlock with monitors mutex") and
// picked up by ovn-kubernetes PR #2666 ("Bump libovsdb to fix monitor
// deadlock").
//
// When the NB/SB database connection drops, handleDisconnectNotification
// calls connect(reconnect=true), which holds rpcMutex and monitorsMutex while
// it re-issues every stored monitor through the helper monitor(id, true,
// ...). The helper also records the request in o.monitors under
// monitorsMutex, which its caller already holds, so the reconnecting
// goroutine blocks on itself with rpcMutex still held, and every later
// Transact from ovnkube blocks on rpcMutex.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrNotConnected = errors.New("not connected")

type TableMonitor struct {
	Table  string
	Fields []string
}

type TableUpdates map[string]int

// rpcClient stands in for the rpc2 JSON-RPC connection to ovsdb-server.
type rpcClient struct {
	endpoint     string
	disconnected chan struct{}
	closeOnce    sync.Once
}

func dial(endpoint string) *rpcClient {
	return &rpcClient{endpoint: endpoint, disconnected: make(chan struct{})}
}

func (c *rpcClient) Call(method string, args any, reply *TableUpdates) error {
	time.Sleep(5 * time.Millisecond)
	if tables, ok := args.([]TableMonitor); ok && method == "monitor" {
		*reply = TableUpdates{}
		for _, t := range tables {
			(*reply)[t.Table] = 3
		}
	}
	return nil
}

func (c *rpcClient) DisconnectNotify() <-chan struct{} { return c.disconnected }
func (c *rpcClient) Close()                            { c.closeOnce.Do(func() { close(c.disconnected) }) }

type TableCache struct {
	mu   sync.RWMutex
	rows map[string]int
}

func (t *TableCache) Purge() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = map[string]int{}
}

func (t *TableCache) Populate(u TableUpdates) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for table, n := range u {
		t.rows[table] += n
	}
}

type ovsdbClient struct {
	endpoint      string
	rpcMutex      sync.RWMutex
	rpcClient     *rpcClient
	cache         *TableCache
	monitorsMutex sync.Mutex
	monitors      map[string][]TableMonitor
	nextID        int
}

func (o *ovsdbClient) Connect() error { return o.connect(false) }

func (o *ovsdbClient) connect(reconnect bool) error {
	o.rpcMutex.Lock()
	defer o.rpcMutex.Unlock()
	o.rpcClient = dial(o.endpoint)
	o.cache.Purge()

	if reconnect {
		o.monitorsMutex.Lock()
		defer o.monitorsMutex.Unlock()
		for id, request := range o.monitors {
			if err := o.monitor(id, reconnect, request...); err != nil {
				o.rpcClient.Close()
				return err
			}
		}
	} else {
		o.monitorsMutex.Lock()
		o.monitors = make(map[string][]TableMonitor)
		o.monitorsMutex.Unlock()
	}
	go o.handleDisconnectNotification(o.rpcClient)
	return nil
}

// Monitor starts a monitor and populates the cache from its initial reply.
func (o *ovsdbClient) Monitor(tables ...TableMonitor) (string, error) {
	o.nextID++
	id := fmt.Sprintf("monitor-%d", o.nextID)
	return id, o.monitor(id, false, tables...)
}

func (o *ovsdbClient) monitor(id string, reconnect bool, tables ...TableMonitor) error {
	if !reconnect {
		o.rpcMutex.RLock()
		defer o.rpcMutex.RUnlock()
	}
	if o.rpcClient == nil {
		return ErrNotConnected
	}
	var reply TableUpdates
	if err := o.rpcClient.Call("monitor", tables, &reply); err != nil {
		return err
	}
	o.monitorsMutex.Lock()
	defer o.monitorsMutex.Unlock()
	o.monitors[id] = tables
	o.cache.Populate(reply)
	return nil
}

func (o *ovsdbClient) handleDisconnectNotification(c *rpcClient) {
	<-c.DisconnectNotify()
	o.rpcMutex.Lock()
	o.rpcClient = nil
	o.rpcMutex.Unlock()
	if err := o.connect(true); err != nil {
		fmt.Println("reconnect failed:", err)
	}
}

// Transact performs operations on the database.
func (o *ovsdbClient) Transact(ops ...string) error {
	o.rpcMutex.Lock()
	defer o.rpcMutex.Unlock()
	if o.rpcClient == nil {
		return ErrNotConnected
	}
	var reply TableUpdates
	return o.rpcClient.Call("transact", ops, &reply)
}

func main() {
	nb := &ovsdbClient{endpoint: "ssl:10.0.0.10:6641", cache: &TableCache{}}
	if err := nb.Connect(); err != nil {
		panic(err)
	}
	nb.Monitor(TableMonitor{Table: "Logical_Switch"}, TableMonitor{Table: "Logical_Switch_Port"})
	nb.Monitor(TableMonitor{Table: "ACL"})

	// The NB database leader restarts: the server closes the connection.
	nb.rpcMutex.RLock()
	nb.rpcClient.Close()
	nb.rpcMutex.RUnlock()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // ovnkube master adding a logical switch port
		defer wg.Done()
		time.Sleep(100 * time.Millisecond)
		fmt.Println("transact:", nb.Transact("insert Logical_Switch_Port"))
	}()
	wg.Wait()
}
