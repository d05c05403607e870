package confine_test

import (
	"testing"

	"github.com/confinelint/confinelint/confine"
)

// The contract promises no allocation on either side of Assert, including
// the violation path when a hook is installed (it runs on hot paths in
// production builds with -tags confine).

func TestAssertDoesNotAllocate(t *testing.T) {
	r := recordViolations(t)
	var o confine.Owner
	o.Bind()
	defer o.Release()
	if n := testing.AllocsPerRun(1000, o.Assert); n != 0 {
		t.Errorf("Assert on the bound goroutine: %v allocs, want 0", n)
	}
	r.expectNone(t)
}

func TestAssertViolationDoesNotAllocate(t *testing.T) {
	var count int
	useViolationHook(t, func(confine.Violation) { count++ })

	var o confine.Owner
	p := park(o.Bind)
	defer p.finish()
	if n := testing.AllocsPerRun(1000, o.Assert); n != 0 {
		t.Errorf("Assert on the wrong goroutine: %v allocs, want 0", n)
	}
	if confine.Enabled && count == 0 {
		t.Error("the hook never ran")
	}
}

func TestBindReleaseDoNotAllocate(t *testing.T) {
	var o confine.Owner
	if n := testing.AllocsPerRun(1000, func() { o.Bind(); o.Release() }); n != 0 {
		t.Errorf("Bind and Release: %v allocs, want 0", n)
	}
}
