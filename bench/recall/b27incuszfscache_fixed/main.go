// Project: lxc/incus (internal/server/storage/drivers/driver_zfs_cache.go)
// PR:      lxc/incus#3136 "incusd/storage: Fix potential deadlock" -- "Don't use
// defer to unlock the read lock when the same code path can call back the parent
// logic causing a deadlock."
//
// Bug: the ZFS driver batches expensive `zfs list` property lookups through a
// global cache. prefillCachedProperties queues the dataset; the first caller
// becomes the filler and holds zfsCachePrefillMu (write) while it sleeps to let
// requests accumulate and then runs `zfs list`. Other callers wait for it by
// taking zfsCachePrefillMu.RLock() -- but released it with a defer. If their
// dataset was queued too late for the running batch they re-trigger by calling
// d.prefillCachedProperties again, become the filler themselves and try
// zfsCachePrefillMu.Lock() while their own deferred read lock is still held:
// the goroutine (an `incus list` API request) hangs forever, and so does every
// later storage query. The fix releases the read lock immediately.
//
// Deadlocking acquisition: zfsCachePrefillMu.Lock() at line 73, reached through
// the recursive call at line 96 while the RLock from line 87 is still held.
package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

type zfsCacheEntry struct {
	Expiry time.Time
	Value  string
}

var (
	zfsCache               = map[string]map[string]zfsCacheEntry{}
	zfsCacheMu             sync.Mutex
	zfsCachePrefillQueue   []string
	zfsCachePrefillRunning bool
	zfsCachePrefillMu      sync.RWMutex
	zfsCacheProperties     = []string{"used", "referenced"}
)

type zfs struct{ pool string }

// runZFSList stands in for subprocess.RunCommand("zfs", "list", "-H", "-p", ...).
func runZFSList(datasets []string) string {
	time.Sleep(100 * time.Millisecond)
	var out []string
	for _, ds := range datasets {
		out = append(out, ds+"\t4096\t2048")
	}
	return strings.Join(out, "\n")
}

func (d *zfs) prefillCachedProperties(dataset string) {
	isCached := func(dataset string) bool {
		_, ok := zfsCache[dataset]
		return ok
	}

	zfsCacheMu.Lock()
	if isCached(dataset) {
		zfsCacheMu.Unlock()
		return
	}
	if !slices.Contains(zfsCachePrefillQueue, dataset) {
		zfsCachePrefillQueue = append(zfsCachePrefillQueue, dataset)
	}

	var runPrefill bool
	if !zfsCachePrefillRunning {
		zfsCachePrefillRunning = true
		zfsCachePrefillMu.Lock()
		defer func() {
			zfsCacheMu.Lock()
			zfsCachePrefillMu.Unlock()
			zfsCachePrefillRunning = false
			zfsCacheMu.Unlock()
		}()
		runPrefill = true
	}
	zfsCacheMu.Unlock()

	if !runPrefill {
		// A prefill is running: wait for it. It may or may not have picked us up
		// from the queue; if not, trigger another run.
		zfsCachePrefillMu.RLock()
		zfsCachePrefillMu.RUnlock() //nolint:staticcheck

		zfsCacheMu.Lock()
		inQueue := slices.Contains(zfsCachePrefillQueue, dataset)
		zfsCacheMu.Unlock()

		if inQueue {
			// We didn't make it, re-trigger.
			d.prefillCachedProperties(dataset)
			return
		}
	}

	time.Sleep(100 * time.Millisecond) // allow for requests to accumulate

	zfsCacheMu.Lock()
	queue := []string{}
	for _, entry := range zfsCachePrefillQueue {
		if !isCached(entry) {
			queue = append(queue, entry)
		}
	}
	zfsCachePrefillQueue = []string{}
	zfsCacheMu.Unlock()
	if len(queue) == 0 {
		return
	}

	out := runZFSList(queue)

	zfsCacheMu.Lock()
	defer zfsCacheMu.Unlock()
	expiry := time.Now().Add(15 * time.Second)
	for line := range strings.SplitSeq(out, "\n") {
		fields := strings.Fields(line)
		record := map[string]zfsCacheEntry{}
		for i, value := range fields[1:] {
			record[zfsCacheProperties[i]] = zfsCacheEntry{Expiry: expiry, Value: value}
		}
		zfsCache[fields[0]] = record
	}
}

func (d *zfs) getCachedProperty(dataset string, key string) (string, bool) {
	d.prefillCachedProperties(dataset)

	zfsCacheMu.Lock()
	defer zfsCacheMu.Unlock()
	value, ok := zfsCache[dataset][key]
	return value.Value, ok
}

func main() {
	d := &zfs{pool: "tank"}
	var wg sync.WaitGroup
	for i, delay := range []time.Duration{0, 150 * time.Millisecond} {
		wg.Add(1)
		go func() { // two concurrent `incus list` requests computing volume usage
			defer wg.Done()
			time.Sleep(delay)
			ds := fmt.Sprintf("tank/containers/c%d", i+1)
			v, ok := d.getCachedProperty(ds, "used")
			fmt.Println(ds, "used:", v, ok)
		}()
	}
	wg.Wait()
}
