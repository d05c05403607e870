// Project: gocql/gocql (host_source.go / ring.go)
// Bug: HostInfo.update takes h.mu.Lock and, when a peer reports a new host
//      ID, logs the host with Logger.Printf("... %v", h). fmt calls
//      HostInfo.String(), which takes h.mu.RLock on the same goroutine ->
//      self-deadlock while refreshing the ring.
// Fix: log with the fields already read under the lock (no String() call
//      while h.mu is held).

package b18gocqlhost_fixed

import (
	"bytes"
	"fmt"
	"log"
	"net"
	"strconv"
	"sync"
	"testing"
)

type StdLogger interface {
	Print(v ...interface{})
	Printf(format string, v ...interface{})
	Println(v ...interface{})
}

var Logger StdLogger = log.New(&bytes.Buffer{}, "gocql: ", log.LstdFlags)

type nodeState int32

const (
	NodeUp nodeState = iota
	NodeDown
)

func (n nodeState) String() string {
	if n == NodeUp {
		return "UP"
	}
	return "DOWN"
}

type HostInfo struct {
	mu               sync.RWMutex
	hostname         string
	peer             net.IP
	broadcastAddress net.IP
	rpcAddress       net.IP
	connectAddress   net.IP
	port             int
	dataCenter       string
	rack             string
	hostId           string
	schemaVersion    string
	state            nodeState
	tokens           []string
}

func (h *HostInfo) connectAddressLocked() (net.IP, string) {
	if len(h.connectAddress) > 0 {
		return h.connectAddress, "connect_address"
	} else if len(h.rpcAddress) > 0 && !h.rpcAddress.IsUnspecified() {
		return h.rpcAddress, "rpc_adress"
	}
	return h.peer, "peer"
}

func (h *HostInfo) HostID() string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.hostId
}

func (h *HostInfo) IsUp() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.state == NodeUp
}

func (h *HostInfo) HostnameAndPort() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hostname == "" {
		addr, _ := h.connectAddressLocked()
		h.hostname = addr.String()
	}
	return net.JoinHostPort(h.hostname, strconv.Itoa(h.port))
}

func (h *HostInfo) String() string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	connectAddr, source := h.connectAddressLocked()
	return fmt.Sprintf("[HostInfo hostname=%q connectAddress=%q peer=%q rpc_address=%q broadcast_address=%q "+
		"port=%d data_centre=%q rack=%q host_id=%q state=%s num_tokens=%d (%s)]",
		h.hostname, connectAddr, h.peer, h.rpcAddress, h.broadcastAddress,
		h.port, h.dataCenter, h.rack, h.hostId, h.state, len(h.tokens), source)
}

// update refreshes this host's metadata from a freshly read system.peers row.
func (h *HostInfo) update(from *HostInfo) {
	if h == from {
		return
	}
	from.mu.RLock()
	defer from.mu.RUnlock()

	h.mu.Lock()
	defer h.mu.Unlock()

	if from.hostId != "" && h.hostId != from.hostId {
		// h.mu is held: do not format h itself (String takes h.mu.RLock).
		addr, _ := h.connectAddressLocked()
		Logger.Printf("gocql: host %s:%d changed host id from %q to %q", addr, h.port, h.hostId, from.hostId)
		h.hostId = from.hostId
	}
	if len(h.tokens) == 0 {
		h.tokens = from.tokens
	}
	if h.dataCenter == "" {
		h.dataCenter = from.dataCenter
	}
	if h.rack == "" {
		h.rack = from.rack
	}
	if h.schemaVersion != from.schemaVersion {
		h.schemaVersion = from.schemaVersion
	}
}

type ring struct {
	mu        sync.RWMutex
	hosts     map[string]*HostInfo
	hostList  []*HostInfo
	endpoints []string
}

func (r *ring) addOrUpdate(host *HostInfo) *HostInfo {
	r.mu.Lock()
	existing, ok := r.hosts[host.HostnameAndPort()]
	if !ok {
		r.hosts[host.HostnameAndPort()] = host
		r.hostList = append(r.hostList, host)
		r.mu.Unlock()
		return host
	}
	r.mu.Unlock()
	existing.update(host)
	return existing
}

func TestRingRefreshHostIDChange(t *testing.T) {
	r := &ring{hosts: map[string]*HostInfo{}}
	r.addOrUpdate(&HostInfo{peer: net.ParseIP("10.0.0.7"), port: 9042, dataCenter: "dc1", rack: "r1",
		hostId: "3f1f7c9e-0001", tokens: []string{"-9223372036854775808"}})

	done := make(chan struct{})
	go func() { // control connection: node was replaced, same address new host ID
		defer close(done)
		r.addOrUpdate(&HostInfo{peer: net.ParseIP("10.0.0.7"), port: 9042, dataCenter: "dc1", rack: "r1",
			hostId: "8c2d11aa-0002", schemaVersion: "b3c1"})
	}()
	<-done
	if h := r.hostList[0]; h.HostID() != "8c2d11aa-0002" {
		t.Fatalf("host id not updated: %v", h)
	}
}
