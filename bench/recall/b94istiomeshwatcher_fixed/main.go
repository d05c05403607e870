// Project: istio/istio (pkg/config/mesh/watcher.go, pilot/pkg/model/context.go Environment, pilot/pkg/bootstrap/server.go mesh handlers), 1.6 development, spring 2020 (approximate).
// Bug: the mesh config file watcher callback held watcher.mutex while it stored the reloaded MeshConfig and ran every handler registered with AddMeshHandler, and the handlers installed by the pilot bootstrap read the new config back through Environment.Mesh(), which read-locks the same mutex, so the first edit of the mesh ConfigMap wedged the watcher goroutine (and every later caller of Mesh()) and no push was ever sent. The fix copies the handlers under the lock and calls them after unlocking (later Mesh() became an atomic load).
package main

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// ---- meshconfig ----

type MeshConfig struct {
	TrustDomain     string
	ProxyListenPort int32
	ConfigSources   []string
}

// fakeFS stands in for the mounted istio ConfigMap volume.
type fakeFS struct {
	mu    sync.Mutex
	files map[string]string
}

func (f *fakeFS) read(name string) string { f.mu.Lock(); defer f.mu.Unlock(); return f.files[name] }
func (f *fakeFS) write(name, content string) {
	f.mu.Lock()
	f.files[name] = content
	f.mu.Unlock()
}

var fs = &fakeFS{files: map[string]string{}}

func ReadMeshConfig(filename string) (*MeshConfig, error) {
	mc := &MeshConfig{TrustDomain: "cluster.local", ProxyListenPort: 15001}
	for _, line := range strings.Split(fs.read(filename), "\n") {
		if v, ok := strings.CutPrefix(line, "trustDomain: "); ok {
			mc.TrustDomain = v
		}
	}
	return mc, nil
}

// ---- pkg/filewatcher ----

type FileWatcher struct{ events map[string]chan struct{} }

func (w *FileWatcher) Add(path string)                  { w.events[path] = make(chan struct{}, 1) }
func (w *FileWatcher) Events(path string) chan struct{} { return w.events[path] }

// addFileWatcher runs callback on every change of file, on the watcher goroutine.
func addFileWatcher(fileWatcher *FileWatcher, file string, callback func()) {
	fileWatcher.Add(file)
	go func() {
		for range fileWatcher.Events(file) {
			callback()
		}
	}()
}

// ---- pkg/config/mesh ----

type Watcher interface {
	Mesh() *MeshConfig
	AddMeshHandler(func())
}

type watcher struct {
	mutex    sync.RWMutex
	handlers []func()
	mesh     *MeshConfig
}

func NewWatcher(fileWatcher *FileWatcher, filename string) (Watcher, error) {
	meshConfig, err := ReadMeshConfig(filename)
	if err != nil {
		return nil, err
	}
	w := &watcher{mesh: meshConfig}
	// Watch the config file for changes and reload if it got modified
	addFileWatcher(fileWatcher, filename, func() {
		meshConfig, err := ReadMeshConfig(filename)
		if err != nil {
			return
		}
		var handlers []func()
		w.mutex.Lock()
		if !reflect.DeepEqual(meshConfig, w.mesh) {
			fmt.Printf("mesh configuration updated to: %+v\n", *meshConfig)
			w.mesh = meshConfig
			handlers = append(handlers, w.handlers...)
		}
		w.mutex.Unlock()
		for _, h := range handlers {
			h()
		}
	})
	return w, nil
}

func (w *watcher) Mesh() *MeshConfig {
	w.mutex.RLock()
	defer w.mutex.RUnlock()
	return w.mesh
}

func (w *watcher) AddMeshHandler(h func()) {
	w.mutex.Lock()
	defer w.mutex.Unlock()
	w.handlers = append(w.handlers, h)
}

// ---- pilot/pkg/model, pkg/spiffe, pilot/pkg/xds ----

type Environment struct {
	Watcher
	DomainSuffix string
}

var trustDomain struct {
	sync.RWMutex
	value string
}

func SetTrustDomain(value string) {
	trustDomain.Lock()
	trustDomain.value = strings.ReplaceAll(value, "@", ".")
	trustDomain.Unlock()
}

type PushRequest struct {
	Full   bool
	Reason string
}

type DiscoveryServer struct{ pushChannel chan *PushRequest }

// ConfigUpdate hands the request to the debouncer.
func (s *DiscoveryServer) ConfigUpdate(req *PushRequest) { s.pushChannel <- req }

// ---- pilot/pkg/bootstrap ----

type Server struct {
	environment *Environment
	XDSServer   *DiscoveryServer
}

func (s *Server) initMeshHandlers() {
	s.environment.AddMeshHandler(func() {
		SetTrustDomain(s.environment.Mesh().TrustDomain)
	})
	s.environment.AddMeshHandler(func() {
		mc := s.environment.Mesh()
		s.XDSServer.ConfigUpdate(&PushRequest{Full: true, Reason: "GlobalUpdate trustDomain=" + mc.TrustDomain})
	})
}

func main() {
	const meshFile = "/etc/istio/config/mesh"
	fs.write(meshFile, "trustDomain: cluster.local\n")
	fw := &FileWatcher{events: map[string]chan struct{}{}}
	w, err := NewWatcher(fw, meshFile)
	if err != nil {
		panic(err)
	}
	s := &Server{
		environment: &Environment{Watcher: w, DomainSuffix: "cluster.local"},
		XDSServer:   &DiscoveryServer{pushChannel: make(chan *PushRequest, 10)},
	}
	s.initMeshHandlers()

	// The operator edits the istio ConfigMap; kubelet updates the mounted file.
	fs.write(meshFile, "trustDomain: corp.example.com\n")
	fw.Events(meshFile) <- struct{}{}

	req := <-s.XDSServer.pushChannel
	fmt.Println("push:", req.Reason, "mesh trust domain:", s.environment.Mesh().TrustDomain)
}
