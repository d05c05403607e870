// Project: kubernetes/kubernetes (pkg/scheduler/core/generic_scheduler.go, equivalence_cache.go; v1.10)
// Bug:     PR #61644 "Use inline func to ensure unlock is executed" (cherry-picked as #64041 into 1.10.3).
//
// With the alpha equivalence cache enabled, podFitsOnNode takes ecache.Lock()
// around "look up cached predicate result, else run predicate and record it" and
// releases it at the end of the loop body. When a predicate returns an error
// (e.g. "node not found" for a node that was just removed from the scheduler
// cache) podFitsOnNode returns early and the ecache lock is never released. The
// next podFitsOnNode call and every informer event handler that invalidates
// equivalence-cache entries (InvalidateCachedPredicateItem) block forever, so
// the scheduler stops scheduling.
// Deadlocking acquisition: ec.Lock() in EquivalenceCache.InvalidateCachedPredicateItem
// (lock leaked by the early `return ..., err` in podFitsOnNode).
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Pod struct{ Name, NodeName string }
type Node struct{ Name string }
type NodeInfo struct{ node *Node }

func (n *NodeInfo) Node() *Node { return n.node }

type FitPredicate func(pod *Pod, nodeInfo *NodeInfo) (bool, []string, error)

var predicatesOrdering = []string{"CheckNodeCondition", "GeneralPredicates", "MatchInterPodAffinity"}

type HostPredicate struct {
	Fit         bool
	FailReasons []string
}

type EquivalenceCache struct {
	sync.RWMutex
	algorithmCache map[string]map[string]HostPredicate // node -> predicateKey -> result
}

// PredicateWithECache returns cached results; needLock=false means the caller holds the lock.
func (ec *EquivalenceCache) PredicateWithECache(podName, nodeName, predicateKey string, needLock bool) (bool, []string, bool) {
	if needLock {
		ec.RLock()
		defer ec.RUnlock()
	}
	if res, ok := ec.algorithmCache[nodeName][predicateKey]; ok {
		return res.Fit, res.FailReasons, false
	}
	return false, nil, true
}

func (ec *EquivalenceCache) UpdateCachedPredicateItem(nodeName, predicateKey string, fit bool, reasons []string) {
	if ec.algorithmCache[nodeName] == nil {
		ec.algorithmCache[nodeName] = map[string]HostPredicate{}
	}
	ec.algorithmCache[nodeName][predicateKey] = HostPredicate{Fit: fit, FailReasons: reasons}
}

// InvalidateCachedPredicateItem is called from the scheduler's informer event handlers.
func (ec *EquivalenceCache) InvalidateCachedPredicateItem(nodeName string, predicateKeys []string) {
	ec.Lock() // never granted: podFitsOnNode leaked the lock
	defer ec.Unlock()
	for _, key := range predicateKeys {
		delete(ec.algorithmCache[nodeName], key)
	}
}

func podFitsOnNode(pod *Pod, info *NodeInfo, predicateFuncs map[string]FitPredicate, ecache *EquivalenceCache) (bool, []string, error) {
	var failedPredicates []string
	eCacheAvailable := ecache != nil
	for _, predicateKey := range predicatesOrdering {
		var (
			fit     bool
			reasons []string
			err     error
		)
		if predicate, exist := predicateFuncs[predicateKey]; exist {
			var invalid bool
			if eCacheAvailable {
				// Lock ecache here to avoid a race condition against cache invalidation invoked
				// in event handlers. This race has existed despite locks in eCache implementation.
				ecache.Lock()
				fit, reasons, invalid = ecache.PredicateWithECache(pod.Name, info.Node().Name, predicateKey, false)
			}
			if !eCacheAvailable || invalid {
				fit, reasons, err = predicate(pod, info)
				if err != nil {
					return false, []string{}, err // ecache is still locked
				}
				if eCacheAvailable {
					ecache.UpdateCachedPredicateItem(info.Node().Name, predicateKey, fit, reasons)
				}
			}
			if eCacheAvailable {
				ecache.Unlock()
			}
			if !fit {
				failedPredicates = append(failedPredicates, reasons...)
			}
		}
	}
	return len(failedPredicates) == 0, failedPredicates, nil
}

func main() {
	// node-b is being deleted: its NodeInfo still exists but lost its *Node object.
	nodeInfoB := &NodeInfo{node: &Node{Name: "node-b"}}
	predicates := map[string]FitPredicate{
		"CheckNodeCondition": func(p *Pod, ni *NodeInfo) (bool, []string, error) { return true, nil, nil },
		"GeneralPredicates": func(p *Pod, ni *NodeInfo) (bool, []string, error) {
			if ni == nodeInfoB {
				return false, nil, errors.New("node not found")
			}
			return true, nil, nil
		},
	}
	ecache := &EquivalenceCache{algorithmCache: map[string]map[string]HostPredicate{}}
	pod := &Pod{Name: "web-0"}

	// findNodesThatFit: workqueue.Parallelize(16, len(nodes), checkNode)
	var wg sync.WaitGroup
	for i, info := range []*NodeInfo{{node: &Node{Name: "node-a"}}, nodeInfoB} {
		wg.Add(1)
		go func(i int, info *NodeInfo) {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 10 * time.Millisecond) // node-a is checked first
			fits, _, err := podFitsOnNode(pod, info, predicates, ecache)
			fmt.Println(info.Node().Name, "fits:", fits, "err:", err)
		}(i, info)
	}
	wg.Wait()

	// Informer: pod deleted on node-a -> factory.invalidateCachedPredicatesOnDeletePod
	ecache.InvalidateCachedPredicateItem("node-a", []string{"GeneralPredicates"})
	fmt.Println("invalidated equivalence cache")
}
