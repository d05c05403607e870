// Project: libovsdb (ovn-org/libovsdb, now ovn-kubernetes/libovsdb), the OVSDB
// client used by ovn-kubernetes, November 2021.
// Files/functions: client/client.go (ovsdbClient.connect with reconnect=true,
// handleDisconnectNotification, Monitor, monitor).
// PR: ovn-org/libovsdb#267 "Fixes deadlock with monitors mutex" (picked up by
// ovn-org/ovn-kubernetes#2666 "Bump libovsdb to fix monitor deadlock").
//
// When the connection to ovsdb-server drops and the client was built with
// reconnect enabled, handleDisconnectNotification calls connect(ctx, true).
// After dialing, connect re-creates every monitor the user had set up: for each
// database it takes db.monitorsMutex (unlock deferred) and calls
// o.monitor(ctx, cookie, true, request) for each stored monitor. monitor itself
// also took db.monitorsMutex in a couple of places, here to look at how many
// monitors exist before choosing the monitor_cond_since transaction ID and to
// record a new monitor. On the reconnect path the first of those locks a
// sync.Mutex the goroutine already holds; the reconnect never finishes and
// keeps rpcMutex, blocking every Transact and Connected call. The fix makes
// monitor assume its caller holds monitorsMutex; Monitor takes it first.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

const ConditionalMonitorSinceRPC, emptyUUID = "monitor_cond_since", "00000000-0000-0000-0000-000000000000"

var ErrAlreadyConnected, ErrNotConnected = errors.New("already connected"), errors.New("not connected")

type MonitorCookie struct{ DatabaseName, ID string }

type Monitor struct {
	Method            string
	Tables            []string
	LastTransactionID string
}

// rpcClient stands in for the cenkalti/rpc2 client of one connection.
type rpcClient struct{ disconnect chan struct{} }

func (c *rpcClient) CallWithContext(ctx context.Context, method string, args interface{}, reply *map[string]int) error {
	*reply = map[string]int{"Logical_Switch/ls0": 1}
	return nil
}

func (c *rpcClient) DisconnectNotify() chan struct{} { return c.disconnect }
func (c *rpcClient) Close()                          { close(c.disconnect) }

type database struct {
	cache      map[string]int
	cacheMutex sync.RWMutex
	// any ongoing monitors, so we can re-create them if we disconnect
	monitors      map[string]*Monitor
	monitorsMutex sync.Mutex
}

type ovsdbClient struct {
	connected     bool
	rpcClient     *rpcClient
	rpcMutex      sync.RWMutex
	primaryDBName string
	databases     map[string]*database
	reconnect     bool
	nextID        int
}

func (o *ovsdbClient) tryEndpoint(ctx context.Context) error {
	o.rpcClient = &rpcClient{disconnect: make(chan struct{})}
	for _, db := range o.databases {
		db.cacheMutex.Lock()
		db.cache = map[string]int{}
		db.cacheMutex.Unlock()
	}
	return nil
}

func (o *ovsdbClient) connect(ctx context.Context, reconnect bool) error {
	o.rpcMutex.Lock()
	defer o.rpcMutex.Unlock()
	if o.rpcClient != nil {
		return ErrAlreadyConnected
	}
	if err := o.tryEndpoint(ctx); err != nil {
		return err
	}

	// if we're reconnecting, re-start all the monitors
	if reconnect {
		for dbName, db := range o.databases {
			db.monitorsMutex.Lock()
			defer db.monitorsMutex.Unlock()
			for id, request := range db.monitors {
				err := o.monitor(ctx, MonitorCookie{DatabaseName: dbName, ID: id}, true, request)
				if err != nil {
					o.rpcClient = nil
					return err
				}
			}
		}
	}

	go o.handleDisconnectNotification()
	o.connected = true
	return nil
}

func (o *ovsdbClient) handleDisconnectNotification() {
	<-o.rpcClient.DisconnectNotify()
	o.rpcMutex.Lock()
	o.rpcClient = nil
	o.connected = false
	o.rpcMutex.Unlock()
	if o.reconnect {
		if err := o.connect(context.Background(), true); err != nil {
			fmt.Println("failed to reconnect:", err)
		}
	}
}

func (o *ovsdbClient) Connected() bool {
	o.rpcMutex.RLock()
	defer o.rpcMutex.RUnlock()
	return o.connected
}

// Monitor will provide updates for a given table/column and populate the
// cache with them.
func (o *ovsdbClient) Monitor(ctx context.Context, monitor *Monitor) (MonitorCookie, error) {
	o.nextID++
	cookie := MonitorCookie{DatabaseName: o.primaryDBName, ID: fmt.Sprintf("m%d", o.nextID)}
	return cookie, o.monitor(ctx, cookie, false, monitor)
}

func (o *ovsdbClient) monitor(ctx context.Context, cookie MonitorCookie, reconnecting bool, monitor *Monitor) error {
	// if we're reconnecting, we already hold the rpcMutex
	if !reconnecting {
		o.rpcMutex.RLock()
		defer o.rpcMutex.RUnlock()
	}
	if o.rpcClient == nil {
		return ErrNotConnected
	}
	db := o.databases[cookie.DatabaseName]

	args := []interface{}{cookie.DatabaseName, cookie, monitor.Tables}
	if monitor.Method == ConditionalMonitorSinceRPC {
		// If we are reconnecting a CondSince monitor that is the only
		// monitor, then we can use its LastTransactionID.
		transactionID := emptyUUID
		db.monitorsMutex.Lock()
		if reconnecting && len(db.monitors) == 1 {
			transactionID = monitor.LastTransactionID
		}
		db.monitorsMutex.Unlock()
		args = append(args, transactionID)
	}

	var tableUpdates map[string]int
	if err := o.rpcClient.CallWithContext(ctx, monitor.Method, args, &tableUpdates); err != nil {
		return err
	}

	if !reconnecting {
		db.monitorsMutex.Lock()
		db.monitors[cookie.ID] = monitor
		db.monitorsMutex.Unlock()
	}

	db.cacheMutex.Lock()
	defer db.cacheMutex.Unlock()
	for k, v := range tableUpdates {
		db.cache[k] = v
	}
	return nil
}

func main() {
	ctx := context.Background()
	o := &ovsdbClient{
		primaryDBName: "OVN_Northbound",
		databases:     map[string]*database{"OVN_Northbound": {monitors: map[string]*Monitor{}}},
		reconnect:     true,
	}
	o.connect(ctx, false)
	o.Monitor(ctx, &Monitor{Method: ConditionalMonitorSinceRPC, Tables: []string{"Logical_Switch"}})

	// ovsdb-server restarts: the connection drops and the client
	// reconnects on its own.
	o.rpcClient.Close()

	time.Sleep(50 * time.Millisecond)
	for !o.Connected() {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("reconnected, monitors restored")
}
