package confine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/confinelint/confinelint/confine"
)

func skipUnlessEnabled(t *testing.T) {
	t.Helper()
	if !confine.Enabled {
		t.Skip("checks are compiled out: build with -tags confine or -race")
	}
}

func TestAssertOnBoundGoroutinePasses(t *testing.T) {
	r := recordViolations(t)
	var o confine.Owner
	o.Bind()
	defer o.Release()
	o.Assert()
	o.Bind() // binding again on the same goroutine is a no-op
	o.Assert()
	r.expectNone(t)
}

func TestAssertOnOtherGoroutineNamesBoth(t *testing.T) {
	skipUnlessEnabled(t)
	r := recordViolations(t)
	var o confine.Owner
	o.Bind()
	defer o.Release()
	var other uint64
	onNewGoroutine(func() {
		other = goroutineID()
		confinedMethod(&o)
	})

	v := r.expectOne(t, confine.WrongGoroutine)
	if owner := goroutineID(); v.Owner != owner || v.Goroutine != other || v.Op != "Assert" {
		t.Errorf("got %+v, want Assert by goroutine %d on owner bound to %d", v, other, owner)
	}
	msg := v.Error()
	for _, want := range []string{
		fmt.Sprintf("goroutine %d", v.Owner),
		fmt.Sprintf("goroutine %d", v.Goroutine),
		"confinedMethod", // the function that asserted
		"bound in github.com/confinelint/confinelint/confine_test.TestAssertOnOtherGoroutineNamesBoth at owner_test.go:", // who owns it
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not mention %q", msg, want)
		}
	}
}

//go:noinline
func confinedMethod(o *confine.Owner) { o.Assert() }

func TestAssertOnUnboundOwnerPasses(t *testing.T) {
	r := recordViolations(t)
	var o confine.Owner
	o.Assert()
	onNewGoroutine(o.Assert)
	r.expectNone(t)
}

func TestAssertAfterReleasePasses(t *testing.T) {
	r := recordViolations(t)
	var o confine.Owner
	onNewGoroutine(func() {
		o.Bind()
		defer o.Release()
		o.Assert()
	})
	o.Assert() // the loop is over: whoever cleans up owns the state now
	r.expectNone(t)
}

func TestRebindAfterRelease(t *testing.T) {
	skipUnlessEnabled(t)
	r := recordViolations(t)
	var o confine.Owner
	for range 3 { // a restartable loop: each run binds and releases
		onNewGoroutine(func() {
			o.Bind()
			defer o.Release()
			o.Assert()
		})
	}
	r.expectNone(t)

	// A fresh binding is enforced like the first.
	p := park(o.Bind)
	defer p.finish()
	o.Assert()
	if v := r.expectOne(t, confine.WrongGoroutine); v.Owner != p.id {
		t.Errorf("owner bound to %d, want the latest binder %d", v.Owner, p.id)
	}
}

func TestRebindAfterOwnerExitedWithoutRelease(t *testing.T) {
	skipUnlessEnabled(t)
	r := recordViolations(t)
	var o confine.Owner
	var first uint64
	onNewGoroutine(func() {
		first = goroutineID()
		o.Bind() // no Release: the goroutine just ends
	})
	waitGoroutineGone(t, first)

	p := park(o.Bind) // takes over from the dead goroutine
	defer p.finish()
	r.expectNone(t)
	o.Assert()
	if v := r.expectOne(t, confine.WrongGoroutine); v.Owner != p.id {
		t.Errorf("owner bound to %d, want the new binder %d", v.Owner, p.id)
	}
}

func TestDoubleBindOnLiveGoroutines(t *testing.T) {
	skipUnlessEnabled(t)
	r := recordViolations(t)
	var o confine.Owner
	first := park(o.Bind)
	defer first.finish()

	var second uint64
	onNewGoroutine(func() {
		second = goroutineID()
		o.Bind()
		defer o.Release() // not the owner: reported as well
	})

	got := r.violations()
	if len(got) != 2 || got[0].Kind != confine.DoubleBind || got[1].Kind != confine.WrongGoroutine {
		t.Fatalf("got %v, want DoubleBind then WrongGoroutine (Release)", kinds(got))
	}
	bind := got[0]
	if bind.Owner != first.id || bind.Goroutine != second || bind.Op != "Bind" {
		t.Errorf("got %+v, want Bind by %d while bound to %d", bind, second, first.id)
	}
	if msg := bind.Error(); !strings.Contains(msg, fmt.Sprintf("goroutine %d", first.id)) ||
		!strings.Contains(msg, fmt.Sprintf("goroutine %d", second)) {
		t.Errorf("message %q does not name both goroutines", msg)
	}
	if got[1].Op != "Release" {
		t.Errorf("second violation is %q, want Release", got[1].Op)
	}
}

func TestReleaseOnOtherGoroutineKeepsBinding(t *testing.T) {
	skipUnlessEnabled(t)
	r := recordViolations(t)
	var o confine.Owner
	p := park(o.Bind)
	defer p.finish()
	o.Release()
	if v := r.expectOne(t, confine.WrongGoroutine); v.Op != "Release" || v.Owner != p.id {
		t.Errorf("got %+v, want Release on owner bound to %d", v, p.id)
	}
	o.Assert()
	if n := len(r.violations()); n != 2 {
		t.Errorf("Assert after a refused Release: %d violations, want 2", n)
	}
}

func TestViolationPanicsWithoutHook(t *testing.T) {
	skipUnlessEnabled(t)
	useViolationHook(t, nil)

	var o confine.Owner
	o.Bind()
	defer o.Release()
	var recovered any
	onNewGoroutine(func() {
		defer func() { recovered = recover() }()
		o.Assert()
	})
	var v confine.Violation
	if err, ok := recovered.(error); !ok || !errors.As(err, &v) || v.Kind != confine.WrongGoroutine {
		t.Fatalf("recovered %v, want a WrongGoroutine Violation", recovered)
	}
}

func TestSetViolationHookReturnsPrevious(t *testing.T) {
	first := func(confine.Violation) {}
	original := confine.SetViolationHook(first)
	t.Cleanup(func() { confine.SetViolationHook(original) })
	if previous := confine.SetViolationHook(nil); previous == nil {
		t.Error("SetViolationHook(nil) did not return the installed hook")
	}
	if previous := confine.SetViolationHook(original); previous != nil {
		t.Error("SetViolationHook after nil returned a hook, want nil (the panic)")
	}
}
