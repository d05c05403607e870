// Project: kubernetes/kubernetes (staging/src/k8s.io/dynamic-resource-allocation/resourceslice/resourceslicecontroller.go Controller.Update, Options.ErrorHandler), v1.34-v1.36 era, fix proposed August 2026 in PR #141108 (field names approximate).
// Bug: Controller.Update holds c.mutex while it validates the DriverResources against ReconcilePoolWithName and, on invalid input, calls the caller-provided ErrorHandler under that lock. ErrorHandler is documented to react to publish failures, for example by replacing the slices, and the only way to do that is Update, so a handler that corrects the input synchronously re-enters Update and blocks on the non-reentrant c.mutex held by its own goroutine. The fix validates and deep-copies the input before taking the lock and calls the handler with no lock held.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

type Slice struct {
	Devices []string
}

type Pool struct {
	Generation int64
	Slices     []Slice
}

// DriverResources is the desired set of ResourceSlices of one driver.
type DriverResources struct {
	Pools map[string]Pool
}

func (r *DriverResources) DeepCopy() *DriverResources {
	out := &DriverResources{Pools: make(map[string]Pool, len(r.Pools))}
	for name, p := range r.Pools {
		cp := Pool{Generation: p.Generation}
		for _, s := range p.Slices {
			cp.Slices = append(cp.Slices, Slice{Devices: append([]string(nil), s.Devices...)})
		}
		out.Pools[name] = cp
	}
	return out
}

// typedQueue stands in for workqueue.TypedRateLimitingInterface[string].
type typedQueue struct {
	mu    sync.Mutex
	dirty map[string]bool
}

func (q *typedQueue) Add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.dirty[key] = true
}

type Options struct {
	DriverName            string
	ReconcilePoolWithName string
	Resources             *DriverResources
	ErrorHandler          func(ctx context.Context, err error, msg string)
}

type Controller struct {
	driverName            string
	reconcilePoolWithName string
	queue                 *typedQueue
	errorHandler          func(ctx context.Context, err error, msg string)

	mutex     sync.RWMutex
	resources *DriverResources
}

func StartController(opts Options) *Controller {
	return &Controller{
		driverName:            opts.DriverName,
		reconcilePoolWithName: opts.ReconcilePoolWithName,
		queue:                 &typedQueue{dirty: map[string]bool{}},
		errorHandler:          opts.ErrorHandler,
		resources:             opts.Resources.DeepCopy(),
	}
}

func roundTaintTimeAdded(r *DriverResources) { _ = time.Second }

// Update sets the new desired state of the resource information.
func (c *Controller) Update(resources *DriverResources) {
	c.mutex.Lock()
	defer c.mutex.Unlock()

	if c.reconcilePoolWithName != "" {
		if _, ok := resources.Pools[c.reconcilePoolWithName]; !ok || len(resources.Pools) != 1 {
			c.errorHandler(context.Background(),
				fmt.Errorf("ReconcilePoolWithName=%q, but found %d pools; DriverResources must contain exactly that pool", c.reconcilePoolWithName, len(resources.Pools)),
				"processing update DriverResources")
			return
		}
	}

	// Sync all old pools..
	for poolName := range c.resources.Pools {
		c.queue.Add(poolName)
	}
	c.resources = resources.DeepCopy()
	roundTaintTimeAdded(c.resources)
	// ... and the new ones (might be the same).
	for poolName := range c.resources.Pools {
		c.queue.Add(poolName)
	}
}

func (c *Controller) pendingPools() []string {
	c.queue.mu.Lock()
	defer c.queue.mu.Unlock()
	var out []string
	for k := range c.queue.dirty {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func main() {
	const pool = "worker-1"
	var ctrl *Controller
	ctrl = StartController(Options{
		DriverName:            "gpu.example.com",
		ReconcilePoolWithName: pool,
		Resources:             &DriverResources{Pools: map[string]Pool{pool: {Generation: 1}}},
		// The driver follows the ErrorHandler documentation and replaces the
		// slices it could not publish with a corrected set.
		ErrorHandler: func(ctx context.Context, err error, msg string) {
			fmt.Println("driver:", msg+":", err)
			ctrl.Update(&DriverResources{Pools: map[string]Pool{pool: {Generation: 2, Slices: []Slice{{Devices: []string{"gpu-0"}}}}}})
		},
	})

	// The kubelet plugin helper publishes a stale pool set left over from a
	// node reconfiguration.
	ctrl.Update(&DriverResources{Pools: map[string]Pool{pool: {Generation: 2}, "worker-0": {Generation: 7}}})
	fmt.Println("queued pools:", ctrl.pendingPools())
}
