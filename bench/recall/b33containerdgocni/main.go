// Project: containerd (github.com/containerd/go-cni, the CNI library of the CRI plugin: cni.go, result.go)
// Issue: containerd/go-cni#126 "fix: recursive RLock() mutex acquision" (regression from go-cni#123;
// see go-cni#125 and containerd/containerd#11186; shipped in containerd 2.0.1)
//
// Bug: go-cni#123 made Setup hold the libcni read lock for the whole call
// (c.RLock(), line 171) so that the readiness check and the attach see one
// set of networks. But Setup still goes through helpers that read-lock the
// same RWMutex themselves: attachNetworks calls c.Networks() (c.RLock(),
// line 157) and Setup ends with createResult, which read-locks again
// (c.RLock(), line 246). When the CRI plugin's CNI config syncer reloads
// the configuration (Load -> c.Lock(), line 140) while a pod's CNI ADD is
// running, the writer queues behind Setup's read lock, and the nested read
// lock in createResult waits for the writer while the writer waits for
// Setup: RunPodSandbox and every later Load/Setup/Status hang, and the
// kubelet marks the node NotReady.
//
// The fake CNI plugin's AddNetworkList (the plugin binary execution, which
// takes a while) is where the syncer's reload happens.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	ErrCNINotInitialized = errors.New("cni plugin not initialized")
	ErrLoad              = errors.New("failed to load cni config")
)

// ---- github.com/containernetworking/cni/libcni, trimmed ----

type NetworkConfigList struct {
	Name       string
	CNIVersion string
}

type RuntimeConf struct {
	ContainerID string
	NetNS       string
	IfName      string
	Args        [][2]string
}

type Interface struct {
	Name    string
	Mac     string
	Sandbox string
}

type IPConfig struct {
	Interface *int
	Address   string
	Gateway   string
}

// types100Result is types100.Result.
type types100Result struct {
	Interfaces []*Interface
	IPs        []*IPConfig
}

// CNI is cnilibrary.CNI.
type CNI interface {
	AddNetworkList(ctx context.Context, net *NetworkConfigList, rt *RuntimeConf) (*types100Result, error)
}

// ---- go-cni ----

type Namespace struct {
	id             string
	path           string
	capabilityArgs map[string]interface{}
	args           map[string]string
}

type NamespaceOpts func(s *Namespace) error

func newNamespace(id, path string, opts ...NamespaceOpts) (*Namespace, error) {
	ns := &Namespace{
		id:             id,
		path:           path,
		capabilityArgs: make(map[string]interface{}),
		args:           make(map[string]string),
	}
	for _, o := range opts {
		if err := o(ns); err != nil {
			return nil, err
		}
	}
	return ns, nil
}

func (ns *Namespace) config(ifName string) *RuntimeConf {
	c := &RuntimeConf{
		ContainerID: ns.id,
		NetNS:       ns.path,
		IfName:      ifName,
	}
	for k, v := range ns.args {
		c.Args = append(c.Args, [2]string{k, v})
	}
	return c
}

type Network struct {
	cni    CNI
	config *NetworkConfigList
	ifName string
}

func (n *Network) Attach(ctx context.Context, ns *Namespace) (*types100Result, error) {
	return n.cni.AddNetworkList(ctx, n.config, ns.config(n.ifName))
}

type config struct {
	pluginDirs    []string
	pluginConfDir string
	prefix        string
}

type Opt func(c *libcni) error

type libcni struct {
	config

	cniConfig    CNI
	networkCount int // minimum network plugin configurations needed to initialize cni
	networks     []*Network
	sync.RWMutex
}

// Load loads the latest config from cni config files.
func (c *libcni) Load(opts ...Opt) error {
	var err error
	c.Lock()
	defer c.Unlock()
	// Reset the networks on a load operation to ensure
	// config happens on a clean slate
	c.reset()

	for _, o := range opts {
		if err = o(c); err != nil {
			return fmt.Errorf("cni config load failed: %v: %w", err, ErrLoad)
		}
	}
	return nil
}

// Networks returns all the configured networks.
// NOTE: Caller MUST NOT modify anything in the returned array.
func (c *libcni) Networks() []*Network {
	c.RLock()
	defer c.RUnlock()
	return append([]*Network{}, c.networks...)
}

func (c *libcni) ready() error {
	if len(c.networks) < c.networkCount {
		return ErrCNINotInitialized
	}
	return nil
}

// Setup setups the network in the namespace and returns a Result
func (c *libcni) Setup(ctx context.Context, id string, path string, opts ...NamespaceOpts) (*Result, error) {
	c.RLock()
	defer c.RUnlock()
	if err := c.ready(); err != nil {
		return nil, err
	}
	ns, err := newNamespace(id, path, opts...)
	if err != nil {
		return nil, err
	}
	result, err := c.attachNetworks(ctx, ns)
	if err != nil {
		return nil, err
	}
	return c.createResult(result)
}

type asynchAttachResult struct {
	index int
	res   *types100Result
	err   error
}

func asynchAttach(ctx context.Context, index int, n *Network, ns *Namespace, wg *sync.WaitGroup, rc chan asynchAttachResult) {
	defer wg.Done()
	r, err := n.Attach(ctx, ns)
	rc <- asynchAttachResult{index: index, res: r, err: err}
}

func (c *libcni) attachNetworks(ctx context.Context, ns *Namespace) ([]*types100Result, error) {
	var wg sync.WaitGroup
	var firstError error
	results := make([]*types100Result, len(c.Networks()))
	rc := make(chan asynchAttachResult)

	for i, network := range c.Networks() {
		wg.Add(1)
		go asynchAttach(ctx, i, network, ns, &wg, rc)
	}

	for range c.Networks() {
		rs := <-rc
		if rs.err != nil && firstError == nil {
			firstError = rs.err
		}
		results[rs.index] = rs.res
	}
	wg.Wait()

	return results, firstError
}

func (c *libcni) reset() {
	c.networks = nil
}

// Result contains the network information returned by CNI.Setup
type Result struct {
	Interfaces map[string]*Config
	raw        []*types100Result
}

type Config struct {
	IPConfigs []*IPConfig
	Mac       string
	Sandbox   string
}

func defaultInterface(prefix string) string {
	return fmt.Sprintf("%s0", prefix)
}

// createResult creates a Result from the given slice of types100.Result, adding
// structured data containing the interface configuration for each of the
// interfaces created in the namespace.
func (c *libcni) createResult(results []*types100Result) (*Result, error) {
	c.RLock()
	defer c.RUnlock()
	r := &Result{
		Interfaces: make(map[string]*Config),
		raw:        results,
	}

	// Plugins may not need to return Interfaces in result if
	// if there are no multiple interfaces created. In that case
	// all configs should be applied against default interface
	r.Interfaces[defaultInterface(c.prefix)] = &Config{}

	for _, result := range results {
		for _, intf := range result.Interfaces {
			r.Interfaces[intf.Name] = &Config{
				Mac:     intf.Mac,
				Sandbox: intf.Sandbox,
			}
		}
		for _, ipConf := range result.IPs {
			name := defaultInterface(c.prefix)
			if ipConf.Interface != nil {
				name = result.Interfaces[*ipConf.Interface].Name
			}
			r.Interfaces[name].IPConfigs = append(r.Interfaces[name].IPConfigs, ipConf)
		}
	}
	return r, nil
}

// WithConfListBytes stands in for the conf-file loading options (WithLoNetwork,
// WithDefaultConf): each appends one Network.
func WithConfListBytes(name string) Opt {
	return func(c *libcni) error {
		c.networks = append(c.networks, &Network{
			cni:    c.cniConfig,
			config: &NetworkConfigList{Name: name, CNIVersion: "1.1.0"},
			ifName: fmt.Sprintf("%s%d", c.prefix, len(c.networks)),
		})
		return nil
	}
}

func WithLabels(labels map[string]string) NamespaceOpts {
	return func(c *Namespace) error {
		for k, v := range labels {
			c.args[k] = v
		}
		return nil
	}
}

// ---- containerd CRI plugin side ----

// cniNetConfSyncer reloads the CNI configuration when files in the conf dir
// change (internal/cri/server/cni_conf_syncer.go).
type cniNetConfSyncer struct {
	netPlugin *libcni
	events    chan string
	loadOpts  []Opt
	done      chan struct{}
}

func (syncer *cniNetConfSyncer) syncLoop() error {
	defer close(syncer.done)
	for event := range syncer.events {
		fmt.Println("receiving change event from cni conf dir:", event)
		if err := syncer.netPlugin.Load(syncer.loadOpts...); err != nil {
			fmt.Println("failed to reload cni configuration:", err)
		}
	}
	return nil
}

// execPlugin is the CNIConfig that executes the plugin binaries; running the
// plugin for the first network takes a moment, and meanwhile a conf file is
// rewritten (e.g. by the CNI daemonset) and the syncer reloads.
type execPlugin struct {
	started atomic.Bool
	events  chan string
}

func (e *execPlugin) AddNetworkList(ctx context.Context, net *NetworkConfigList, rt *RuntimeConf) (*types100Result, error) {
	if e.started.CompareAndSwap(false, true) {
		time.Sleep(10 * time.Millisecond)
		e.events <- "WRITE /etc/cni/net.d/10-cilium.conflist"
		time.Sleep(20 * time.Millisecond)
	}
	zero := 0
	return &types100Result{
		Interfaces: []*Interface{{Name: rt.IfName, Sandbox: rt.NetNS}},
		IPs:        []*IPConfig{{Interface: &zero, Address: "10.0.0.5/24"}},
	}, nil
}

func main() {
	plugin := &execPlugin{events: make(chan string)}
	c := &libcni{
		config: config{
			pluginDirs:    []string{"/opt/cni/bin"},
			pluginConfDir: "/etc/cni/net.d",
			prefix:        "eth",
		},
		cniConfig:    plugin,
		networkCount: 1,
	}
	loadOpts := []Opt{WithConfListBytes("cilium"), WithConfListBytes("portmap")}
	if err := c.Load(loadOpts...); err != nil {
		fmt.Println(err)
		return
	}

	syncer := &cniNetConfSyncer{netPlugin: c, events: plugin.events, loadOpts: loadOpts, done: make(chan struct{})}
	go syncer.syncLoop()

	// RunPodSandbox -> setupPodNetwork -> netPlugin.Setup
	result, err := c.Setup(context.Background(), "sandbox-1", "/var/run/netns/cni-1",
		WithLabels(map[string]string{"K8S_POD_NAME": "web-0"}))
	if err != nil {
		fmt.Println("setup:", err)
		return
	}
	fmt.Println("interfaces:", len(result.Interfaces))

	close(syncer.events)
	<-syncer.done
}
