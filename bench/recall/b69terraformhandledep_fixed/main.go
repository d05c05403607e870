// Reconstruction of hashicorp/terraform#39053, "Potential deadlock due to
// leaked mutex in internal/rpcapi/handles.go#newHandleWithDependency".
//
// The rpcapi package keeps every object a client opened (source bundles, stack
// configurations, states, plans) in one handleTable guarded by handleTable.mu.
// Stacks.OpenStackConfiguration checks the source bundle handle, loads the
// configuration from the bundle (slow, it reads files), and then registers
// the configuration with NewStackConfig, which records that the configuration
// depends on the bundle. If the client closed the bundle in the meantime
// through Dependencies.CloseSourceBundle, newHandleWithDependency finds no
// parent and returns newHandleErrorNoParent, but it returns after t.mu.Lock()
// without unlocking. The error reaches the client, and the next RPC that
// touches any handle (here the same client reopening its bundle, and another
// client opening a bundle) blocks on handleTable.mu forever.
//
// The fixed twin unlocks the handle table on the no-parent error path.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type handle[T any] int64

func (hnd handle[T]) IsNil() bool { return int64(hnd) == 0 }

type sourceBundle struct{ dir string }

type stackConfig struct {
	sourceAddr string
	components []string
}

type handleTable struct {
	handleObjs map[int64]any
	nextHandle int64
	handleDeps map[int64]map[int64]struct{}
	mu         sync.Mutex
}

func newHandleTable() *handleTable {
	return &handleTable{
		handleObjs: make(map[int64]any),
		handleDeps: make(map[int64]map[int64]struct{}),
		nextHandle: 1,
	}
}

var errNewHandleNoParent = errors.New("parent handle does not exist")
var errCloseHandleUnknown = errors.New("unknown handle")
var errCloseHandleBlocked = errors.New("handle is in use by another open handle")

func (t *handleTable) NewSourceBundle(b *sourceBundle) handle[*sourceBundle] {
	return newHandle(t, b)
}

func (t *handleTable) SourceBundle(hnd handle[*sourceBundle]) *sourceBundle {
	ret, _ := readHandle(t, hnd)
	return ret
}

func (t *handleTable) CloseSourceBundle(hnd handle[*sourceBundle]) error {
	return closeHandle(t, hnd)
}

func (t *handleTable) NewStackConfig(cfg *stackConfig, owner handle[*sourceBundle]) (handle[*stackConfig], error) {
	return newHandleWithDependency(t, cfg, owner)
}

func newHandle[ObjT any](t *handleTable, obj ObjT) handle[ObjT] {
	t.mu.Lock()
	hnd := t.nextHandle
	t.nextHandle++
	t.handleObjs[hnd] = obj
	t.mu.Unlock()
	return handle[ObjT](hnd)
}

func newHandleWithDependency[ObjT, DepT any](t *handleTable, obj ObjT, dep handle[DepT]) (handle[ObjT], error) {
	t.mu.Lock()
	if depObjectI, exists := t.handleObjs[int64(dep)]; !exists {
		t.mu.Unlock()
		return handle[ObjT](0), errNewHandleNoParent
	} else if depObject, ok := depObjectI.(DepT); !ok {
		panic(fmt.Sprintf("dependency handle %d is %T, not %T", int64(dep), depObjectI, depObject))
	}
	hnd := t.nextHandle
	t.nextHandle++
	t.handleObjs[hnd] = obj
	if _, exists := t.handleDeps[int64(dep)]; !exists {
		t.handleDeps[int64(dep)] = make(map[int64]struct{})
	}
	t.handleDeps[int64(dep)][hnd] = struct{}{}
	t.mu.Unlock()
	return handle[ObjT](hnd), nil
}

func readHandle[ObjT any](t *handleTable, hnd handle[ObjT]) (ObjT, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var zero ObjT
	existing, exists := t.handleObjs[int64(hnd)]
	if !exists {
		return zero, false
	}
	obj, ok := existing.(ObjT)
	return obj, ok
}

func closeHandle[ObjT any](t *handleTable, hnd handle[ObjT]) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if existing, exists := t.handleObjs[int64(hnd)]; !exists {
		return errCloseHandleUnknown
	} else if _, ok := existing.(ObjT); !ok {
		return errCloseHandleUnknown
	}
	if len(t.handleDeps[int64(hnd)]) > 0 {
		return errCloseHandleBlocked
	}
	delete(t.handleObjs, int64(hnd))
	for _, m := range t.handleDeps {
		delete(m, int64(hnd))
	}
	return nil
}

type dependenciesServer struct{ handles *handleTable }

func (s *dependenciesServer) OpenSourceBundle(dir string) int64 {
	return int64(s.handles.NewSourceBundle(&sourceBundle{dir: dir}))
}

func (s *dependenciesServer) CloseSourceBundle(hnd int64) error {
	return s.handles.CloseSourceBundle(handle[*sourceBundle](hnd))
}

type stacksServer struct{ handles *handleTable }

func loadConfigDir(sourceAddr string, sources *sourceBundle) *stackConfig {
	time.Sleep(30 * time.Millisecond) // parsing the .tfstack.hcl files of the bundle
	return &stackConfig{sourceAddr: sourceAddr, components: []string{"network", "cluster"}}
}

func (s *stacksServer) OpenStackConfiguration(sourceBundleHandle int64, sourceAddr string) (int64, error) {
	sourcesHnd := handle[*sourceBundle](sourceBundleHandle)
	sources := s.handles.SourceBundle(sourcesHnd)
	if sources == nil {
		return 0, errors.New("the given source bundle handle is invalid")
	}
	config := loadConfigDir(sourceAddr, sources)
	configHnd, err := s.handles.NewStackConfig(config, sourcesHnd)
	if err != nil {
		return 0, fmt.Errorf("allocating config handle: %w", err)
	}
	return int64(configHnd), nil
}

func main() {
	handles := newHandleTable()
	deps := &dependenciesServer{handles: handles}
	stacks := &stacksServer{handles: handles}

	bundle := deps.OpenSourceBundle("/tmp/bundle-a")

	// A second client of the same rpcapi server closes the bundle while the
	// configuration is being loaded, then opens a bundle of its own.
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(10 * time.Millisecond)
		fmt.Println("close bundle:", deps.CloseSourceBundle(bundle))
		time.Sleep(40 * time.Millisecond)
		fmt.Println("other client bundle:", deps.OpenSourceBundle("/tmp/bundle-b"))
	}()

	cfg, err := stacks.OpenStackConfiguration(bundle, "git::https://example.com/stack")
	fmt.Println("open stack configuration:", cfg, err)
	if err != nil {
		bundle = deps.OpenSourceBundle("/tmp/bundle-a")
		cfg, err = stacks.OpenStackConfiguration(bundle, "git::https://example.com/stack")
		fmt.Println("retry:", cfg, err)
	}
	<-done
}
