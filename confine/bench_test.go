package confine_test

import (
	"sync"
	"testing"

	"github.com/confinelint/confinelint/confine"
)

// Run with and without -tags confine:
//
//	go test -run '^$' -bench . -benchmem ./confine/
//	go test -run '^$' -bench . -benchmem -tags confine ./confine/
//
// Off, Assert must cost what the empty loop costs; on, a few nanoseconds.

func BenchmarkEmptyLoop(b *testing.B) {
	for range b.N {
	}
}

func BenchmarkAssert(b *testing.B) {
	var o confine.Owner
	o.Bind()
	defer o.Release()
	for range b.N {
		o.Assert()
	}
}

func BenchmarkAssertUnbound(b *testing.B) {
	var o confine.Owner
	for range b.N {
		o.Assert()
	}
}

// BenchmarkAssertViolation measures the wrong-goroutine path with a hook
// that only counts.
func BenchmarkAssertViolation(b *testing.B) {
	var count int
	useViolationHook(b, func(confine.Violation) { count++ })
	var o confine.Owner
	p := park(o.Bind)
	defer p.finish()
	for range b.N {
		o.Assert()
	}
}

func BenchmarkBind(b *testing.B) {
	var o confine.Owner
	for range b.N {
		o.Bind()
		o.Release()
	}
}

func BenchmarkMutexLockUnlock(b *testing.B) {
	m := confine.NewMutex("bench.mu")
	for range b.N {
		m.Lock()
		//lint:ignore SA2001 measuring a bare Lock and Unlock
		m.Unlock()
	}
}

func BenchmarkSyncMutexLockUnlock(b *testing.B) {
	var m sync.Mutex
	for range b.N {
		m.Lock()
		//lint:ignore SA2001 measuring a bare Lock and Unlock
		m.Unlock()
	}
}

// BenchmarkMutexNestedLockUnlock takes a second lock while holding a
// first, so the enabled build checks one known edge per iteration.
func BenchmarkMutexNestedLockUnlock(b *testing.B) {
	outer, inner := confine.NewMutex("bench.outer"), confine.NewMutex("bench.inner")
	for range b.N {
		outer.Lock()
		inner.Lock()
		//lint:ignore SA2001 measuring a bare Lock and Unlock
		inner.Unlock()
		outer.Unlock()
	}
}

func BenchmarkSyncMutexNestedLockUnlock(b *testing.B) {
	var outer, inner sync.Mutex
	for range b.N {
		outer.Lock()
		inner.Lock()
		//lint:ignore SA2001 measuring a bare Lock and Unlock
		inner.Unlock()
		outer.Unlock()
	}
}
