// Project: ovn-org/ovn-kubernetes (go-controller), late 2021; shipped in OpenShift 4.7-4.10.
// Files/functions: go-controller/pkg/ovn/egressgw.go (Controller.ensureRouteInfoLocked,
// Controller.getRouteInfosForGateway, Controller.addGWRoutesForPod,
// Controller.deletePodGWRoutesForNamespace, externalRouteInfo, Controller.exGWCacheMutex).
// Issue/PR: ovn-org/ovn-kubernetes#2659 "egressgw: fix deadlock due to behavior of RWLock"
// (after #2655; backported as openshift/ovn-kubernetes#1012 and #1013, Bugzilla 2068619/2069247).
//
// The external-gateway route cache is a map guarded by the RWMutex exGWCacheMutex, and each
// entry (externalRouteInfo) has its own lock. ensureRouteInfoLocked, for an entry that already
// exists, drops the cache lock, locks the routeInfo, and then takes exGWCacheMutex.RLock again
// to check that the entry is still the one in the cache. getRouteInfosForGateway does the
// opposite: it holds exGWCacheMutex.RLock while it locks every matching routeInfo. Two readers
// alone get along, but a third goroutine that wants the cache write lock (ensureRouteInfoLocked
// for a new pod) queues behind the reader and, RWMutex being writer-preferring, blocks the
// second RLock: the pod add holds routeInfo and waits for the cache read lock behind the writer,
// the writer waits for the gateway delete's read lock, and the gateway delete waits for the
// routeInfo. The fix marks a removed routeInfo deleted instead of re-checking the cache under
// its lock, and the namespace lookups only collect entries under the cache lock and lock each
// routeInfo after releasing it.
package main

import (
	"fmt"
	"sync"
	"time"
)

type NamespacedName struct{ Namespace, Name string }

type externalRouteInfo struct {
	sync.RWMutex
	deleted bool
	// podIP -> gateway IP -> gateway router
	podExternalRoutes map[string]map[string]string
}

type Controller struct {
	exGWCacheMutex  sync.RWMutex
	externalGWCache map[NamespacedName]*externalRouteInfo
	nbctlLatency    time.Duration
}

// runOVNNbctl stands for util.RunOVNNbctl, an exec of ovn-nbctl that can take a while.
func (oc *Controller) runOVNNbctl(args ...string) {
	time.Sleep(oc.nbctlLatency)
}

// ensureRouteInfoLocked either gets the current routeInfo in the cache with a lock, or creates+locks a new one if missing
func (oc *Controller) ensureRouteInfoLocked(podName NamespacedName) (*externalRouteInfo, error) {
	oc.exGWCacheMutex.Lock()
	routeInfo, ok := oc.externalGWCache[podName]
	if !ok {
		routeInfo = &externalRouteInfo{podExternalRoutes: make(map[string]map[string]string)}
		// we are creating routeInfo and going to set it in podExternalRoutes map
		// so safe to hold the lock while we create and add it
		defer oc.exGWCacheMutex.Unlock()
		oc.externalGWCache[podName] = routeInfo
	} else {
		// if we found an existing routeInfo, do not hold the cache lock
		// while waiting for routeInfo to Lock
		oc.exGWCacheMutex.Unlock()
	}

	routeInfo.Lock()

	// If routeInfo was deleted between releasing the cache lock
	// and grabbing the routeInfo lock, start over
	if routeInfo.deleted {
		routeInfo.Unlock()
		return oc.ensureRouteInfoLocked(podName)
	}
	return routeInfo, nil
}

// getRouteInfosForNamespace returns all routeInfos for a specific namespace
func (oc *Controller) getRouteInfosForNamespace(namespace string) []*externalRouteInfo {
	oc.exGWCacheMutex.RLock()
	defer oc.exGWCacheMutex.RUnlock()

	routes := make([]*externalRouteInfo, 0)
	for namespacedName, routeInfo := range oc.externalGWCache {
		if namespacedName.Namespace == namespace {
			routes = append(routes, routeInfo)
		}
	}
	return routes
}

// addGWRoutesForPod handles adding all routes to gateways for a pod on a specific GR
func (oc *Controller) addGWRoutesForPod(gws []string, podIP string, podNsName NamespacedName, node string) error {
	gr := "GR_" + node
	routeInfo, err := oc.ensureRouteInfoLocked(podNsName)
	if err != nil {
		return fmt.Errorf("failed to ensure routeInfo for %s, error: %v", podNsName, err)
	}
	defer routeInfo.Unlock()
	for _, gw := range gws {
		if foundGR, ok := routeInfo.podExternalRoutes[podIP][gw]; ok && foundGR == gr {
			continue
		}
		oc.runOVNNbctl("--may-exist", "--policy=src-ip", "--ecmp-symmetric-reply", "lr-route-add", gr, podIP+"/32", gw)
		if routeInfo.podExternalRoutes[podIP] == nil {
			routeInfo.podExternalRoutes[podIP] = make(map[string]string)
		}
		routeInfo.podExternalRoutes[podIP][gw] = gr
	}
	return nil
}

// deletePodGWRoutesForNamespace handles deleting all routes in a namespace for a specific pod GW
func (oc *Controller) deletePodGWRoutesForNamespace(gws []string, namespace string) {
	for _, gwIP := range gws {
		for _, routeInfo := range oc.getRouteInfosForNamespace(namespace) {
			routeInfo.Lock()
			if routeInfo.deleted {
				routeInfo.Unlock()
				continue
			}
			for podIP, route := range routeInfo.podExternalRoutes {
				if gr, ok := route[gwIP]; ok {
					oc.runOVNNbctl("--if-exists", "--policy=src-ip", "lr-route-del", gr, podIP+"/32", gwIP)
					delete(routeInfo.podExternalRoutes[podIP], gwIP)
				}
			}
			routeInfo.Unlock()
		}
	}
}

func main() {
	oc := &Controller{externalGWCache: map[NamespacedName]*externalRouteInfo{}}
	podA := NamespacedName{Namespace: "apps", Name: "web-0"}
	if err := oc.addGWRoutesForPod([]string{"172.18.0.5"}, "10.244.1.3", podA, "worker-1"); err != nil {
		panic(err)
	}

	oc.nbctlLatency = 200 * time.Millisecond
	var wg sync.WaitGroup
	run := func(delay time.Duration, f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(delay)
			f()
		}()
	}
	// pod add retry: a second gateway for web-0, nbctl is slow while web-0's routeInfo is held
	run(0, func() { _ = oc.addGWRoutesForPod([]string{"172.18.0.6"}, "10.244.1.3", podA, "worker-1") })
	// namespace annotation update for web-0 queues on its routeInfo
	run(50*time.Millisecond, func() { _ = oc.addGWRoutesForPod([]string{"172.18.0.7"}, "10.244.1.3", podA, "worker-1") })
	// the exgw pod 172.18.0.5 is deleted: read-locks the cache and queues on web-0's routeInfo
	run(100*time.Millisecond, func() { oc.deletePodGWRoutesForNamespace([]string{"172.18.0.5"}, "apps") })
	// a new pod in the namespace needs a new cache entry: write lock
	run(150*time.Millisecond, func() {
		_ = oc.addGWRoutesForPod([]string{"172.18.0.6"}, "10.244.1.4", NamespacedName{Namespace: "apps", Name: "web-1"}, "worker-2")
	})
	wg.Wait()
	fmt.Println("all external gateway events processed")
}
