// Project: sudorandom/fauxrpc (fake gRPC/Connect/gRPC-Web server driven by protobuf descriptors),
// v0.x, November 2024.
// Files/functions: private/server/server.go (server.Reset, rebuildHandlers), private/registry/registry.go
// (serviceRegistry.Reset, AddFile, FindFileByPath, through the ServiceRegistry interface),
// private/registry/loaders.go (AddServicesFromGlobal), the registry.v1 RegistryService Reset RPC.
// Issue sudorandom/fauxrpc#14 "Possible deadlock in serviceRegistry.Reset", fixed by releasing
// the registry lock before re-adding the well-known types.
//
// The RegistryService/Reset RPC calls server.Reset, which holds the server lock and calls Reset
// on its embedded ServiceRegistry. serviceRegistry.Reset write-locks the registry, clears the
// services and files, and, with the deferred Unlock still pending, calls AddServicesFromGlobal to
// re-register the protobuf well-known types. AddServicesFromGlobal adds each file through the
// registry's AddFile, which first checks whether the file is already known with FindFileByPath,
// a read lock on the same RWMutex. The goroutine already holds the write lock, so the read lock
// never succeeds and every later Reset (and every request that needs the server lock) hangs.
// The fix unlocks the registry before AddServicesFromGlobal.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var errNotFound = errors.New("not found")

type FileDescriptor struct {
	Path     string
	Services []string
}

type Files struct{ byPath map[string]*FileDescriptor }

func newFiles() *Files { return &Files{byPath: map[string]*FileDescriptor{}} }

func (f *Files) FindFileByPath(path string) (*FileDescriptor, error) {
	if fd, ok := f.byPath[path]; ok {
		return fd, nil
	}
	return nil, errNotFound
}

func (f *Files) RegisterFile(fd *FileDescriptor) error { f.byPath[fd.Path] = fd; return nil }

type ServiceRegistry interface {
	Get(name string) *FileDescriptor
	Reset() error
	AddFile(fd *FileDescriptor) error
	ServiceCount() int
}

type serviceRegistry struct {
	services map[string]*FileDescriptor
	files    *Files
	lock     *sync.RWMutex
}

func NewServiceRegistry() (*serviceRegistry, error) {
	r := &serviceRegistry{services: map[string]*FileDescriptor{}, files: newFiles(), lock: &sync.RWMutex{}}
	return r, AddServicesFromGlobal(r)
}

func (r *serviceRegistry) Reset() error {
	r.lock.Lock()
	r.services = map[string]*FileDescriptor{}
	r.files = newFiles()
	r.lock.Unlock()
	return AddServicesFromGlobal(r)
}

func (r *serviceRegistry) Get(name string) *FileDescriptor {
	r.lock.RLock()
	defer r.lock.RUnlock()
	return r.services[name]
}

func (r *serviceRegistry) FindFileByPath(path string) (*FileDescriptor, error) {
	r.lock.RLock()
	defer r.lock.RUnlock()
	return r.files.FindFileByPath(path)
}

func (r *serviceRegistry) AddFile(fd *FileDescriptor) error {
	if _, err := r.FindFileByPath(fd.Path); err == nil {
		return nil
	}
	r.lock.Lock()
	defer r.lock.Unlock()
	if err := r.files.RegisterFile(fd); err != nil {
		return err
	}
	for _, svc := range fd.Services {
		r.services[svc] = fd
	}
	return nil
}

func (r *serviceRegistry) ServiceCount() int {
	r.lock.RLock()
	defer r.lock.RUnlock()
	return len(r.services)
}

var wellKnownFiles = []*FileDescriptor{
	{Path: "google/protobuf/any.proto"},
	{Path: "google/protobuf/empty.proto"},
	{Path: "google/protobuf/timestamp.proto"},
	{Path: "grpc/reflection/v1/reflection.proto", Services: []string{"grpc.reflection.v1.ServerReflection"}},
}

// AddServicesFromGlobal adds the 'well known' types to the registry.
func AddServicesFromGlobal(registry ServiceRegistry) error {
	for _, fd := range wellKnownFiles {
		if err := registry.AddFile(fd); err != nil {
			return err
		}
	}
	return nil
}

type server struct {
	ServiceRegistry
	lock     sync.RWMutex
	handlers map[string]string
}

func (s *server) rebuildHandlers() error {
	s.handlers = map[string]string{}
	for _, name := range []string{"grpc.reflection.v1.ServerReflection", "eliza.v1.ElizaService"} {
		if fd := s.ServiceRegistry.Get(name); fd != nil {
			s.handlers[name] = fd.Path
		}
	}
	return nil
}

func (s *server) Reset() error {
	s.lock.Lock()
	defer s.lock.Unlock()
	if err := s.ServiceRegistry.Reset(); err != nil {
		return err
	}
	return s.rebuildHandlers()
}

// registryHandler is the registry.v1.RegistryService implementation.
type registryHandler struct{ srv *server }

func (h *registryHandler) Reset() error { return h.srv.Reset() }

func main() {
	reg, err := NewServiceRegistry()
	if err != nil {
		panic(err)
	}
	srv := &server{ServiceRegistry: reg}
	_ = srv.AddFile(&FileDescriptor{Path: "eliza/v1/eliza.proto", Services: []string{"eliza.v1.ElizaService"}})
	fmt.Println("services before reset:", srv.ServiceCount())

	h := &registryHandler{srv: srv}
	if err := h.Reset(); err != nil {
		fmt.Println("reset:", err)
	}
	fmt.Println("services after reset:", srv.ServiceCount())
}
