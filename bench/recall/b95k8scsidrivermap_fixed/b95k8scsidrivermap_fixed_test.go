// Project: kubernetes/kubernetes (pkg/volume/csi/csi_plugin.go, kubelet plugin watcher), v1.11/v1.12, 2018 (issue #69189, fixed by PR #69443 and its 1.12 counterpart; mechanism approximate).
// Bug: the CSI RegistrationCallback write-locks the global csiDrivers map for its whole body (deferred unlock) and, when
// the driver's NodeGetInfo call fails, cleans up through unregisterDriver, which locks csiDrivers again, so the plugin
// watcher goroutine deadlocks on the driver map and no CSI driver can be registered or used on that node.
package b95k8scsidrivermapfixed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

const csiTimeout = 15 * time.Second

type csiDriver struct {
	driverName     string
	driverEndpoint string
}

type csiDriversStore struct {
	driversMap map[string]csiDriver
	sync.RWMutex
}

// csiDrivers map keep track of all registered CSI drivers on the node and their
// corresponding sockets
var csiDrivers csiDriversStore

// nodeInfoManager updates the Node object and CSINodeInfo for a registered driver.
type nodeInfoManager interface {
	AddNodeInfo(driverName, driverNodeID string, maxVolumes int64, topology map[string]string) error
	RemoveNodeInfo(driverName string) error
}

var nim nodeInfoManager

type csiClient interface {
	NodeGetInfo(ctx context.Context) (nodeID string, maxVolumePerNode int64, accessibleTopology map[string]string, err error)
}

type csiDriverClient struct{ driverName string }

// NodeGetInfo dials the driver socket registered in csiDrivers; the fake driver is not serving yet.
func (c *csiDriverClient) NodeGetInfo(ctx context.Context) (string, int64, map[string]string, error) {
	driver, ok := csiDrivers.driversMap[c.driverName]
	if !ok {
		return "", 0, nil, fmt.Errorf("driver name %s not found in the list of registered CSI drivers", c.driverName)
	}
	return "", 0, nil, fmt.Errorf("rpc error: code = Unavailable desc = connection to %s refused", driver.driverEndpoint)
}

var newCsiDriverClient = func(driverName string) csiClient { return &csiDriverClient{driverName: driverName} }

// RegistrationCallback is called by kubelet's plugin watcher upon detection
// of a new registration socket opened by CSI Driver registrar side car.
func RegistrationCallback(pluginName string, endpoint string, versions []string, socketPath string) (chan bool, error) {
	if endpoint == "" {
		endpoint = socketPath
	}

	func() {
		// Storing endpoint of newly registered CSI driver into the map, where CSI driver name will be the key
		// all other CSI components will be able to get the actual socket of CSI drivers by its name.

		// It's not necessary to lock the entire RegistrationCallback() function because only the CSI
		// client depends on this driver map, and the CSI client does not depend on node information
		// updated in the rest of the function.
		csiDrivers.Lock()
		defer csiDrivers.Unlock()
		csiDrivers.driversMap[pluginName] = csiDriver{driverName: pluginName, driverEndpoint: endpoint}
	}()

	// Get node info from the driver.
	csi := newCsiDriverClient(pluginName)
	ctx, cancel := context.WithTimeout(context.Background(), csiTimeout)
	defer cancel()

	driverNodeID, maxVolumePerNode, accessibleTopology, err := csi.NodeGetInfo(ctx)
	if err != nil {
		unregisterDriver(pluginName)
		return nil, fmt.Errorf("error during CSI NodeGetInfo() call: %v", err)
	}

	err = nim.AddNodeInfo(pluginName, driverNodeID, maxVolumePerNode, accessibleTopology)
	if err != nil {
		unregisterDriver(pluginName)
		return nil, fmt.Errorf("error updating CSI node info in the cluster: %v", err)
	}
	return nil, nil
}

func unregisterDriver(driverName string) {
	func() {
		csiDrivers.Lock()
		defer csiDrivers.Unlock()
		delete(csiDrivers.driversMap, driverName)
	}()

	if err := nim.RemoveNodeInfo(driverName); err != nil {
		fmt.Printf("Error unregistering CSI driver: %v\n", err)
	}
}

type fakeNodeInfoManager struct {
	mu    sync.Mutex
	nodes map[string]string
}

func (f *fakeNodeInfoManager) AddNodeInfo(name, id string, max int64, topo map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id == "" {
		return errors.New("driverNodeID must not be empty")
	}
	f.nodes[name] = id
	return nil
}

func (f *fakeNodeInfoManager) RemoveNodeInfo(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.nodes, name)
	return nil
}

// pluginWatcher mimics pkg/kubelet/util/pluginwatcher: it calls the handler registered for the plugin type.
type pluginWatcher struct {
	handlers map[string]func(name, endpoint string, versions []string, socketPath string) (chan bool, error)
}

func (w *pluginWatcher) handlePluginRegistration(pluginType, name, endpoint, socketPath string) error {
	handler, ok := w.handlers[pluginType]
	if !ok {
		return fmt.Errorf("no handler registered for plugin type: %s", pluginType)
	}
	_, err := handler(name, endpoint, []string{"0.3.0"}, socketPath)
	return err
}

func TestB95k8scsidrivermapFixed(t *testing.T) {
	csiDrivers = csiDriversStore{driversMap: map[string]csiDriver{}}
	nim = &fakeNodeInfoManager{nodes: map[string]string{}}
	w := &pluginWatcher{handlers: map[string]func(string, string, []string, string) (chan bool, error){
		"CSIPlugin": RegistrationCallback,
	}}

	err := w.handlePluginRegistration("CSIPlugin", "csi-hostpath", "", "/var/lib/kubelet/plugins/csi-hostpath/csi.sock")
	if err == nil {
		t.Fatalf("registration of a driver that is not serving should fail")
	}
	csiDrivers.RLock()
	defer csiDrivers.RUnlock()
	if _, ok := csiDrivers.driversMap["csi-hostpath"]; ok {
		t.Fatalf("failed driver is still registered")
	}
}
