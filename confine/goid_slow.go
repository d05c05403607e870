//go:build (confine || race) && !amd64 && !arm64

package confine

// currentGoroutineID falls back to runtime.Stack parsing on architectures
// without a getg stub: correct, but about a microsecond per call.
func currentGoroutineID() uint64 { return goroutineIDFromStack() }

// fastGoroutineID reports whether calibration succeeded (for tests).
func fastGoroutineID() bool { return false }
