// Project: syncthing/syncthing (lib/model/model.go Model.GetIgnores, Model.CommitConfiguration; cmd/syncthing/gui.go getDBIgnores), v0.14.49, August 2018 (approximate reconstruction).
// Bug: #4974 changed GetIgnores to take m.fmut.RLock without a deferred unlock, but the early return taken when the folder's path check fails (CheckPath on a missing folder path) returned the error without RUnlock. The GUI polls the ignores of every folder, so one folder whose directory is gone leaks a read lock on fmut, and the next writer (a config change restarting folders in CommitConfiguration) blocks forever; syncthing's deadlock detector then panics "deadlock detected at fmut" (PR #5126 "lib/model: Always release the lock": the lookups are done under the lock and it is released right away).
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

var (
	ErrPathMissing   = errors.New("folder path missing")
	ErrMarkerMissing = errors.New("folder marker missing")
)

// fakeFS stands in for lib/fs.
var fakeFS = map[string]string{
	"/data/docs":           "",
	"/data/docs/.stfolder": "",
	"/data/docs/.stignore": "*.tmp\n(?d).DS_Store",
}

type FolderConfiguration struct {
	ID     string
	Path   string
	Paused bool
}

func (f FolderConfiguration) CheckPath() error {
	if _, ok := fakeFS[f.Path]; !ok {
		return ErrPathMissing
	}
	if _, ok := fakeFS[f.Path+"/.stfolder"]; !ok {
		return ErrMarkerMissing
	}
	return nil
}

type Configuration struct{ Folders []FolderConfiguration }

// Wrapper is lib/config.Wrapper.
type Wrapper struct {
	mut sync.Mutex
	cfg Configuration
}

func (w *Wrapper) Folders() map[string]FolderConfiguration {
	w.mut.Lock()
	defer w.mut.Unlock()
	m := make(map[string]FolderConfiguration)
	for _, f := range w.cfg.Folders {
		m[f.ID] = f
	}
	return m
}

// Matcher is lib/ignore.Matcher.
type Matcher struct {
	mut   sync.Mutex
	path  string
	lines []string
}

func (m *Matcher) Load(file string) error {
	m.mut.Lock()
	defer m.mut.Unlock()
	if data, ok := fakeFS[m.path+"/"+file]; ok {
		m.lines = strings.Split(data, "\n")
	}
	return nil
}

func (m *Matcher) Lines() []string {
	m.mut.Lock()
	defer m.mut.Unlock()
	return append([]string(nil), m.lines...)
}

type Model struct {
	cfg           *Wrapper
	fmut          sync.RWMutex // protects the folder maps below
	folderCfgs    map[string]FolderConfiguration
	folderIgnores map[string]*Matcher
}

func (m *Model) GetIgnores(folder string) ([]string, error) {
	m.fmut.RLock()
	cfg, ok := m.folderCfgs[folder]
	if !ok {
		cfg, ok = m.cfg.Folders()[folder]
		if !ok {
			m.fmut.RUnlock()
			return nil, fmt.Errorf("Folder %s does not exist", folder)
		}
	}

	// On creation a new folder with ignore patterns validly has no marker yet.
	if err := cfg.CheckPath(); err != nil && err != ErrMarkerMissing {
		return nil, err
	}

	ignores, ok := m.folderIgnores[folder]
	m.fmut.RUnlock()
	if !ok {
		ignores = &Matcher{path: cfg.Path}
	}
	if err := ignores.Load(".stignore"); err != nil {
		return nil, err
	}
	return ignores.Lines(), nil
}

// CommitConfiguration restarts folders whose configuration changed.
func (m *Model) CommitConfiguration(from, to Configuration) bool {
	for _, toCfg := range to.Folders {
		m.fmut.Lock()
		fromCfg := m.folderCfgs[toCfg.ID]
		if fromCfg != toCfg {
			m.folderCfgs[toCfg.ID] = toCfg
			fmt.Println("restarting folder", toCfg.ID, "paused:", toCfg.Paused)
		}
		m.fmut.Unlock()
	}
	return true
}

// getDBIgnores is the GUI's GET /rest/db/ignores handler.
func getDBIgnores(m *Model, folder string) {
	lines, err := m.GetIgnores(folder)
	if err != nil {
		fmt.Println("GET /rest/db/ignores?folder="+folder+": 500", err)
		return
	}
	fmt.Println("GET /rest/db/ignores?folder="+folder+":", lines)
}

func main() {
	cfg := Configuration{Folders: []FolderConfiguration{
		{ID: "docs", Path: "/data/docs"},
		{ID: "photos", Path: "/mnt/usb/photos"}, // the USB disk is unplugged
	}}
	w := &Wrapper{cfg: cfg}
	m := &Model{cfg: w, folderCfgs: map[string]FolderConfiguration{}, folderIgnores: map[string]*Matcher{}}
	for _, f := range cfg.Folders {
		m.folderCfgs[f.ID] = f
		m.folderIgnores[f.ID] = &Matcher{path: f.Path}
	}

	var wg sync.WaitGroup
	for _, f := range []string{"docs", "photos"} {
		wg.Add(1)
		go func(folder string) { // the web GUI refreshes every folder
			defer wg.Done()
			getDBIgnores(m, folder)
		}(f)
	}
	wg.Wait()

	// The user pauses the unreachable folder.
	to := Configuration{Folders: []FolderConfiguration{cfg.Folders[0], {ID: "photos", Path: "/mnt/usb/photos", Paused: true}}}
	m.CommitConfiguration(cfg, to)
	fmt.Println("done")
}
