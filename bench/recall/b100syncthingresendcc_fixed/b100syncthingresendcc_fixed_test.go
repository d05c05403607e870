// Project: syncthing/syncthing (lib/model/model.go model.resendClusterConfig, generateClusterConfig, removeFolder, cleanupFolderLocked, CommitConfiguration; lib/config/wrapper.go notifyListeners), v1.11/v1.12 development, November 2020 (PR #7107, approximate).
// Bug: resendClusterConfig, run at the end of CommitConfiguration, held m.pmut (read) while generateClusterConfig took m.fmut (read), inverting the documented fmut-before-pmut order, while removeFolder of a concurrent config commit holds m.fmut (write) and takes m.pmut (write) in cleanupFolderLocked to drop the folder from every connection's index senders, so the two commits deadlock. The fix collects the connections under pmut and generates the cluster configs after releasing it.
package b100syncthingresendccfixed

import (
	"sync"
	"testing"
)

type DeviceID string

type FolderConfiguration struct {
	ID      string
	Path    string
	Devices []DeviceID
	fs      Filesystem
}

func (f FolderConfiguration) Filesystem() Filesystem { return f.fs }

func (f FolderConfiguration) SharedWith(dev DeviceID) bool {
	for _, d := range f.Devices {
		if d == dev {
			return true
		}
	}
	return false
}

type Configuration struct{ Folders []FolderConfiguration }

type Filesystem interface{ RemoveAll(name string) error }

type ClusterConfig struct{ Folders []string }

// Connection is the protocol.Connection the model keeps per device.
type Connection interface {
	ID() DeviceID
	ClusterConfig(ClusterConfig)
}

type indexSenderRegistry struct {
	mut     sync.Mutex
	senders map[string]bool
}

func (r *indexSenderRegistry) remove(folder string) {
	r.mut.Lock()
	delete(r.senders, folder)
	r.mut.Unlock()
}

type model struct {
	// fmut must be acquired before pmut when both are needed.
	fmut       sync.RWMutex
	folderCfgs map[string]FolderConfiguration

	pmut         sync.RWMutex
	conn         map[DeviceID]Connection
	indexSenders map[DeviceID]*indexSenderRegistry
}

func (m *model) generateClusterConfig(device DeviceID) ClusterConfig {
	var cc ClusterConfig
	m.fmut.RLock()
	defer m.fmut.RUnlock()
	for id, cfg := range m.folderCfgs {
		if cfg.SharedWith(device) {
			cc.Folders = append(cc.Folders, id)
		}
	}
	return cc
}

func (m *model) resendClusterConfig(ids []DeviceID) {
	if len(ids) == 0 {
		return
	}
	ccConns := make([]Connection, 0, len(ids))
	m.pmut.RLock()
	for _, id := range ids {
		if conn, ok := m.conn[id]; ok {
			ccConns = append(ccConns, conn)
		}
	}
	m.pmut.RUnlock()
	// Generating cluster-configs acquires fmut -> must happen outside of pmut.
	for _, conn := range ccConns {
		cm := m.generateClusterConfig(conn.ID())
		go conn.ClusterConfig(cm)
	}
}

// Need to hold lock on m.fmut when calling this.
func (m *model) cleanupFolderLocked(cfg FolderConfiguration) {
	delete(m.folderCfgs, cfg.ID)
	m.pmut.Lock()
	for _, r := range m.indexSenders {
		r.remove(cfg.ID)
	}
	m.pmut.Unlock()
}

func (m *model) removeFolder(cfg FolderConfiguration) {
	m.fmut.Lock()
	isPathUnique := true
	for id, other := range m.folderCfgs {
		if id != cfg.ID && other.Path == cfg.Path {
			isPathUnique = false
		}
	}
	if isPathUnique {
		// Delete syncthing specific files
		cfg.Filesystem().RemoveAll(".stfolder")
	}
	m.cleanupFolderLocked(cfg)
	m.fmut.Unlock()
}

func (m *model) CommitConfiguration(from, to Configuration) bool {
	fromFolders := make(map[string]FolderConfiguration)
	for _, f := range from.Folders {
		fromFolders[f.ID] = f
	}
	clusterConfigDevices := make(map[DeviceID]struct{})
	for _, cfg := range to.Folders {
		old, ok := fromFolders[cfg.ID]
		delete(fromFolders, cfg.ID)
		if ok && len(old.Devices) == len(cfg.Devices) {
			continue
		}
		m.fmut.Lock()
		m.folderCfgs[cfg.ID] = cfg
		m.fmut.Unlock()
		for _, d := range cfg.Devices {
			clusterConfigDevices[d] = struct{}{}
		}
	}
	for _, removed := range fromFolders {
		m.removeFolder(removed)
	}
	ids := make([]DeviceID, 0, len(clusterConfigDevices))
	for d := range clusterConfigDevices {
		ids = append(ids, d)
	}
	m.resendClusterConfig(ids)
	return true
}

// wrapper is the config.Wrapper: committers are notified from their own
// goroutines, so two quick config changes commit concurrently.
type wrapper struct {
	subs []*model
}

func (w *wrapper) notifyListeners(from, to Configuration) *sync.WaitGroup {
	wg := new(sync.WaitGroup)
	for _, sub := range w.subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub.CommitConfiguration(from, to)
		}()
	}
	return wg
}

type fakeConn struct {
	id         DeviceID
	once       sync.Once
	idCalled   chan struct{}
	fmutHeld   chan struct{}
	clusterCfg chan ClusterConfig
}

func (c *fakeConn) ID() DeviceID {
	c.once.Do(func() {
		close(c.idCalled)
		<-c.fmutHeld
	})
	return c.id
}

func (c *fakeConn) ClusterConfig(cc ClusterConfig) { c.clusterCfg <- cc }

type fakeFS struct{ fmutHeld chan struct{} }

func (f *fakeFS) RemoveAll(string) error { close(f.fmutHeld); return nil }

func TestB100syncthingresendccFixed(t *testing.T) {
	fmutHeld := make(chan struct{})
	conn := &fakeConn{id: "DEV1", idCalled: make(chan struct{}), fmutHeld: fmutHeld, clusterCfg: make(chan ClusterConfig, 1)}
	docs := FolderConfiguration{ID: "docs", Path: "/data/docs", Devices: []DeviceID{"DEV1"}, fs: &fakeFS{fmutHeld: fmutHeld}}
	photos := FolderConfiguration{ID: "photos", Path: "/data/photos"}
	m := &model{
		folderCfgs:   map[string]FolderConfiguration{"docs": docs, "photos": photos},
		conn:         map[DeviceID]Connection{"DEV1": conn},
		indexSenders: map[DeviceID]*indexSenderRegistry{"DEV1": {senders: map[string]bool{"docs": true}}},
	}
	w := &wrapper{subs: []*model{m}}

	// First change: share "photos" with DEV1.
	base := Configuration{Folders: []FolderConfiguration{docs, photos}}
	shared := photos
	shared.Devices = []DeviceID{"DEV1"}
	first := w.notifyListeners(base, Configuration{Folders: []FolderConfiguration{docs, shared}})
	<-conn.idCalled

	// Second change, committed while the first is still resending: remove "docs".
	second := w.notifyListeners(Configuration{Folders: []FolderConfiguration{docs, shared}}, Configuration{Folders: []FolderConfiguration{shared}})
	first.Wait()
	second.Wait()
	if cc := <-conn.clusterCfg; len(cc.Folders) != 1 || cc.Folders[0] != "photos" {
		t.Fatalf("unexpected cluster config %v", cc)
	}
}
