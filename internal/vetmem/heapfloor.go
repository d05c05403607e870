package vetmem

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// heapFloor is the heap size below which the vet tool does not collect.
//
// A vet-tool process analyses one package and exits; most packages are
// small, and with the default GOGC a process whose heap ends at 20 MB
// still runs a collection at 4, 8, 16... MB of heap: on the benchmark
// corpus the collector took about a fifth of the tool's CPU (bench/
// RESULTS.md). As cmd/compile does for the same reason (its
// AdjustStartingHeap), the tool lets the heap grow to heapFloor before a
// collection, then sets GOGC so that the next one comes at twice the live
// heap or at heapFloor, whichever is more. Large packages, whose live heap
// passes half of heapFloor, collect as with GOGC=100, so the largest
// process's peak does not move. A GOGC set in the environment is left
// alone.
const heapFloor = 64 << 20

// keepHeapFloor sets GOGC for the first collection and re-sets it after
// every collection, from the live heap it left.
func keepHeapFloor() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(percentFor(0))
	armAfterGC()
}

// armAfterGC adjusts GOGC after the next collection: a finalizer runs
// once the collector has found its object unreachable.
func armAfterGC() {
	runtime.SetFinalizer(new(gcSentinel), func(*gcSentinel) {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetGCPercent(percentFor(sample[0].Value.Uint64()))
		}
		armAfterGC()
	})
}

type gcSentinel struct{ _ [16]byte } // not zero-sized: those are never finalized

// percentFor returns the GOGC that puts the next collection at heapFloor,
// or at twice live when that is more. Before any collection the runtime's
// target is its 4 MB minimum heap times (1 + GOGC/100).
func percentFor(live uint64) int {
	if live == 0 {
		live = 4 << 20
	}
	if 2*live >= heapFloor {
		return 100
	}
	return int(100 * (heapFloor - live) / live)
}
