// Fixed twin: PR #3386 applied (CommitConfiguration runs asynchronously,
// after the new configuration is in place and the wrapper lock released).
// Shape of syncthing/syncthing issue #3077 ("Deadlock when adding folder",
// fixed by PR #3386): config.Wrapper holds its mutex and calls every
// subscribed Committer's CommitConfiguration synchronously; the model's
// CommitConfiguration starts the new folder, which wants fmut. Meanwhile
// Model.ConnectionStats holds fmut (read) and asks the wrapper for the
// device list, which wants the wrapper's mutex.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type DeviceID string

type DeviceConfiguration struct {
	DeviceID DeviceID
	Name     string
}

type FolderConfiguration struct {
	ID   string
	Path string
}

type Configuration struct {
	Version int
	Devices []DeviceConfiguration
	Folders []FolderConfiguration
}

func (c Configuration) Copy() Configuration {
	n := c
	n.Devices = append([]DeviceConfiguration(nil), c.Devices...)
	n.Folders = append([]FolderConfiguration(nil), c.Folders...)
	return n
}

// Committer is notified of configuration changes.
type Committer interface {
	VerifyConfiguration(from, to Configuration) error
	CommitConfiguration(from, to Configuration) (handled bool)
	String() string
}

type Wrapper struct {
	cfg       Configuration
	deviceMap map[DeviceID]DeviceConfiguration
	subs      []Committer
	mut       sync.Mutex
	commits   sync.WaitGroup
}

func (w *Wrapper) Subscribe(c Committer) {
	w.mut.Lock()
	w.subs = append(w.subs, c)
	w.mut.Unlock()
}

// replaceLocked is called with w.mut held. It only verifies and swaps the
// configuration; committers are notified after the lock is released.
func (w *Wrapper) replaceLocked(to Configuration) (Configuration, error) {
	from := w.cfg
	for _, sub := range w.subs {
		if err := sub.VerifyConfiguration(from, to); err != nil {
			return from, err
		}
	}
	w.cfg = to
	w.deviceMap = nil
	return from, nil
}

// notifyListeners runs each CommitConfiguration in its own goroutine,
// outside w.mut.
func (w *Wrapper) notifyListeners(from, to Configuration) {
	w.mut.Lock()
	subs := append([]Committer(nil), w.subs...)
	w.mut.Unlock()
	for _, sub := range subs {
		w.commits.Add(1)
		go func(sub Committer) {
			defer w.commits.Done()
			if !sub.CommitConfiguration(from, to) {
				fmt.Println(sub, "requires restart")
			}
		}(sub)
	}
}

func (w *Wrapper) SetFolder(fld FolderConfiguration) error {
	w.mut.Lock()
	newCfg := w.cfg.Copy()
	newCfg.Folders = append(newCfg.Folders, fld)
	from, err := w.replaceLocked(newCfg)
	w.mut.Unlock()
	if err != nil {
		return err
	}
	w.notifyListeners(from, newCfg)
	return nil
}

func (w *Wrapper) Devices() map[DeviceID]DeviceConfiguration {
	w.mut.Lock()
	defer w.mut.Unlock()
	if w.deviceMap == nil {
		w.deviceMap = make(map[DeviceID]DeviceConfiguration, len(w.cfg.Devices))
		for _, dev := range w.cfg.Devices {
			w.deviceMap[dev.DeviceID] = dev
		}
	}
	return w.deviceMap
}

type Model struct {
	cfg         *Wrapper
	fmut        sync.RWMutex
	folderCfgs  map[string]FolderConfiguration
	folderState map[string]string
	pmut        sync.RWMutex
	conn        map[DeviceID]string
}

func (m *Model) String() string { return "model" }

func (m *Model) VerifyConfiguration(from, to Configuration) error { return nil }

func (m *Model) CommitConfiguration(from, to Configuration) bool {
	known := map[string]bool{}
	for _, f := range from.Folders {
		known[f.ID] = true
	}
	for _, f := range to.Folders {
		if !known[f.ID] {
			m.StartFolder(f)
		}
	}
	return true
}

func (m *Model) StartFolder(cfg FolderConfiguration) {
	m.fmut.Lock()
	defer m.fmut.Unlock()
	m.folderCfgs[cfg.ID] = cfg
	m.folderState[cfg.ID] = "scanning"
}

// ConnectionStats backs GET /rest/system/connections.
func (m *Model) ConnectionStats() map[string]interface{} {
	m.fmut.RLock()
	m.pmut.RLock()
	defer m.fmut.RUnlock()
	defer m.pmut.RUnlock()

	res := make(map[string]interface{})
	stats := make(map[DeviceID]string, len(m.conn))
	for dev, addr := range m.conn {
		time.Sleep(50 * time.Millisecond) // per-connection statistics
		stats[dev] = addr
	}
	var devs []string
	for dev, devCfg := range m.cfg.Devices() {
		if addr, ok := stats[dev]; ok {
			devs = append(devs, fmt.Sprintf("%s(%s)@%s", dev, devCfg.Name, addr))
		}
	}
	sort.Strings(devs)
	res["connections"] = devs
	res["folders"] = len(m.folderCfgs)
	return res
}

func main() {
	w := &Wrapper{cfg: Configuration{Devices: []DeviceConfiguration{{"AAA", "laptop"}, {"BBB", "nas"}}}}
	m := &Model{cfg: w, folderCfgs: map[string]FolderConfiguration{}, folderState: map[string]string{},
		conn: map[DeviceID]string{"AAA": "10.0.0.2:22000", "BBB": "10.0.0.3:22000"}}
	w.Subscribe(m)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // GUI: POST /rest/system/config adds a folder
		defer wg.Done()
		time.Sleep(25 * time.Millisecond)
		w.SetFolder(FolderConfiguration{ID: "photos", Path: "~/Photos"})
		fmt.Println("folder added")
	}()

	stats := m.ConnectionStats() // GUI: GET /rest/system/connections
	fmt.Println("connections:", stats["connections"])
	wg.Wait()
	w.commits.Wait()
}
