// Project: moby/moby, libnetwork/drivers/bridge/bridge_linux.go (driver.configure,
// handleFirewalldReload, handleFirewalldReloadNw, userlandProxyPath), bridge_store.go
// (initStore, populateNetworks, populateEndpoints), port_mapping_linux.go
// (restorePortAllocations, addPortMappings), libnetwork/iptables/firewalld.go (OnReloaded),
// Docker Engine 28.x.
// Issue: moby/moby#50619 "Hang when starting docker" (regression from PR #49728); fixed by
// PR moby/moby#50620 "libnet/d/bridge: handleFirewalldReloadNw: fix deadlock".
//
// The bridge driver takes d.configNetwork before its embedded mutex d.Mutex everywhere but
// in the firewalld reload handler. configure() registers d.handleFirewalldReload (a method
// value) with iptables.OnReloaded while holding d.configNetwork (line 112) and restores the
// networks from the store; restoring an endpoint's port bindings asks the network for the
// userland-proxy path, bridgeNetwork.userlandProxyPath locks the network, and
// driver.userlandProxyPath locks d (line 120). A firewalld reload arriving meanwhile runs
// handleFirewalldReloadNw, which locks d first and then d.configNetwork (line 213). Each
// goroutine holds the lock the other wants: dockerd never finishes starting. main starts
// the daemon with one stored network and endpoint, and firewalld reloads while the
// endpoints are being read from the store.
//
// FIXED twin: the PR's fix, handleFirewalldReloadNw takes d.configNetwork (line 213)
// before d's own mutex (line 216), the order the rest of the driver uses.
package main

import (
	"fmt"
	"sync"
	"time"
)

// ---- libnetwork/iptables/firewalld.go ----

var onReloaded []*func() // callbacks when Firewalld has been reloaded

// OnReloaded add callback
func OnReloaded(callback func()) {
	for _, pf := range onReloaded {
		if pf == &callback {
			return
		}
	}
	onReloaded = append(onReloaded, &callback)
}

// reloaded is called by the D-Bus signal handler when firewalld has been reloaded.
func reloaded() {
	for _, pf := range onReloaded {
		(*pf)()
	}
}

// ---- libnetwork/datastore ----

type Store struct {
	networks  []*networkConfiguration
	endpoints []*bridgeEndpoint
}

// listEndpoints stands for Store.List(&bridgeEndpoint{}), a boltdb read.
func (s *Store) listEndpoints() []*bridgeEndpoint {
	time.Sleep(100 * time.Millisecond) // boltdb read
	return s.endpoints
}

// ---- libnetwork/drivers/bridge ----

type configuration struct {
	EnableIPTables      bool
	EnableUserlandProxy bool
	UserlandProxyPath   string
}

type networkConfiguration struct {
	ID         string
	BridgeName string
}

type PortBinding struct {
	HostPort      uint16
	ContainerPort uint16
}

type bridgeEndpoint struct {
	id           string
	nid          string
	portBindings []PortBinding
	portMapping  []PortBinding
}

type bridgeNetwork struct {
	id        string
	config    *networkConfiguration
	endpoints map[string]*bridgeEndpoint
	driver    *driver
	sync.Mutex
}

type driver struct {
	config        configuration
	networks      map[string]*bridgeNetwork
	store         *Store
	configNetwork sync.Mutex
	sync.Mutex
}

func (d *driver) configure(config configuration) error {
	d.Lock()
	d.config = config
	d.Unlock()

	// Register for an event when firewalld is reloaded, but take the config lock so
	// that events won't be processed until the initial load from Store is complete.
	d.configNetwork.Lock()
	defer d.configNetwork.Unlock()
	OnReloaded(d.handleFirewalldReload)

	return d.initStore()
}

func (d *driver) userlandProxyPath() string {
	d.Lock()
	defer d.Unlock()

	if d.config.EnableUserlandProxy {
		return d.config.UserlandProxyPath
	}
	return ""
}

func (n *bridgeNetwork) userlandProxyPath() string {
	n.Lock()
	defer n.Unlock()
	if n.driver == nil {
		return ""
	}
	return n.driver.userlandProxyPath()
}

// ---- bridge_store.go ----

func (d *driver) initStore() error {
	d.populateNetworks()
	d.populateEndpoints()
	return nil
}

func (d *driver) populateNetworks() {
	for _, ncfg := range d.store.networks {
		nw := &bridgeNetwork{id: ncfg.ID, config: ncfg, endpoints: map[string]*bridgeEndpoint{}, driver: d}
		d.Lock()
		d.networks[ncfg.ID] = nw
		d.Unlock()
	}
}

func (d *driver) populateEndpoints() {
	for _, ep := range d.store.listEndpoints() {
		n, ok := d.networks[ep.nid]
		if !ok {
			continue
		}
		n.endpoints[ep.id] = ep
		n.restorePortAllocations(ep)
	}
}

// ---- port_mapping_linux.go ----

func (n *bridgeNetwork) restorePortAllocations(ep *bridgeEndpoint) {
	if ep.portBindings == nil {
		return
	}
	pbs, err := n.addPortMappings(ep.portBindings)
	if err != nil {
		fmt.Println("failed to reserve ports:", err)
		return
	}
	ep.portMapping = pbs
}

func (n *bridgeNetwork) addPortMappings(cfg []PortBinding) ([]PortBinding, error) {
	proxyPath := n.userlandProxyPath()
	bindings := make([]PortBinding, 0, len(cfg))
	for _, c := range cfg {
		// start docker-proxy at proxyPath and add the DNAT rules
		_ = proxyPath
		bindings = append(bindings, c)
	}
	return bindings, nil
}

// ---- firewalld reload ----

func (d *driver) handleFirewalldReload() {
	if !d.config.EnableIPTables {
		return
	}

	d.Lock()
	nids := make([]string, 0, len(d.networks))
	for _, nw := range d.networks {
		nids = append(nids, nw.id)
	}
	d.Unlock()

	for _, nid := range nids {
		d.handleFirewalldReloadNw(nid)
	}
}

func (d *driver) handleFirewalldReloadNw(nid string) {
	// Make sure the network isn't being deleted, and ProgramExternalConnectivity
	// isn't modifying iptables rules, while restoring the rules.
	d.configNetwork.Lock()
	defer d.configNetwork.Unlock()

	d.Lock()
	defer d.Unlock()

	if !d.config.EnableIPTables {
		return
	}

	nw, ok := d.networks[nid]
	if !ok {
		// Network deleted since the reload started, not an error.
		return
	}
	fmt.Println("re-applied iptables rules for", nw.config.BridgeName)
}

func main() {
	store := &Store{
		networks:  []*networkConfiguration{{ID: "n1", BridgeName: "br-web"}},
		endpoints: []*bridgeEndpoint{{id: "e1", nid: "n1", portBindings: []PortBinding{{8080, 80}}}},
	}
	d := &driver{networks: map[string]*bridgeNetwork{}, store: store}

	started := make(chan error)
	go func() { // dockerd: controller.New -> registerNetworkDrivers -> bridge.Register
		started <- d.configure(configuration{EnableIPTables: true, EnableUserlandProxy: true, UserlandProxyPath: "/usr/bin/docker-proxy"})
	}()
	time.Sleep(50 * time.Millisecond)
	go reloaded() // firewalld D-Bus "Reloaded" signal
	fmt.Println("bridge driver configured:", <-started)
	time.Sleep(50 * time.Millisecond)
}
