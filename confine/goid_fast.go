//go:build (confine || race) && (amd64 || arm64)

package confine

import "unsafe"

// getg returns the runtime's g for the calling goroutine (goid_$GOARCH.s).
func getg() unsafe.Pointer

// gPrefix mirrors the fields of runtime.g that precede goid, as declared in
// runtime/runtime2.go from Go 1.23 through at least 1.26. It only supplies the
// first offset to try: calibrateGoidOffset checks it, and searches if a
// future runtime has moved the field.
type gPrefix struct {
	_    [2]uintptr // stack
	_    uintptr    // stackguard0
	_    uintptr    // stackguard1
	_    uintptr    // _panic
	_    uintptr    // _defer
	_    uintptr    // m
	_    [6]uintptr // sched: gobuf{sp, pc, g, ctxt, lr, bp}
	_    uintptr    // syscallsp
	_    uintptr    // syscallpc
	_    uintptr    // syscallbp
	_    uintptr    // stktopsp
	_    uintptr    // param
	_    uint32     // atomicstatus
	_    uint32     // stackLock
	goid uint64
}

// goidOffset is where goid lives inside runtime.g, or 0 when calibration
// failed and ids come from runtime.Stack. Written once by init, so reading it
// needs no synchronisation.
var goidOffset uintptr

func init() { goidOffset = calibrateGoidOffset() }

// currentGoroutineID returns the calling goroutine's id: two loads when
// calibrated, runtime.Stack parsing otherwise.
func currentGoroutineID() uint64 {
	if off := goidOffset; off != 0 {
		return *(*uint64)(unsafe.Add(getg(), off))
	}
	return goroutineIDFromStack()
}

// calibrateGoidOffset finds the offset inside runtime.g that holds the
// goroutine id on this goroutine and on a second one (ids differ, so a
// coincidental match is not credible). The known layout is tried first; the
// scan stays within the first 256 bytes, well inside runtime.g (over 400
// bytes for many releases).
func calibrateGoidOffset() uintptr {
	const scanLimit = 256
	known := unsafe.Offsetof(gPrefix{}.goid)
	candidates := []uintptr{known}
	for off := uintptr(8); off < scanLimit; off += 8 {
		if off != known {
			candidates = append(candidates, off)
		}
	}
	candidates = goidOffsetsMatchingHere(candidates)
	done := make(chan []uintptr)
	go func() { done <- goidOffsetsMatchingHere(candidates) }()
	if matching := <-done; len(matching) > 0 {
		return matching[0]
	}
	return 0
}

// goidOffsetsMatchingHere keeps the candidate offsets at which the calling
// goroutine's g holds its id, preserving order.
func goidOffsetsMatchingHere(candidates []uintptr) []uintptr {
	id := goroutineIDFromStack()
	g := getg()
	var matching []uintptr
	for _, off := range candidates {
		if *(*uint64)(unsafe.Add(g, off)) == id {
			matching = append(matching, off)
		}
	}
	return matching
}

// fastGoroutineID reports whether calibration succeeded (for tests).
func fastGoroutineID() bool { return goidOffset != 0 }
