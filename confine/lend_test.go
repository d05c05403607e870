package confine_test

import (
	"strings"
	"testing"

	"github.com/confinelint/confinelint/confine"
)

// A loan (Lend ... Reclaim) lets one callback goroutine, serialized with
// the owner by the library that runs it, pass Assert.

func TestLentOwnerAcceptsTheBorrower(t *testing.T) {
	r := recordViolations(t)
	var o confine.Owner
	o.Bind()
	defer o.Release()
	o.Lend()
	onNewGoroutine(func() {
		o.Assert()
		o.Assert() // the same borrower again
	})
	o.Reclaim()
	o.Assert()
	r.expectNone(t)
}

func TestReclaimedOwnerRejectsTheBorrower(t *testing.T) {
	skipUnlessEnabled(t)
	r := recordViolations(t)
	var o confine.Owner
	o.Bind()
	defer o.Release()
	o.Lend()
	o.Reclaim()
	onNewGoroutine(o.Assert)
	if v := r.expectOne(t, confine.WrongGoroutine); v.Lent {
		t.Errorf("after Reclaim the owner is not lent: %+v", v)
	}
}

func TestLentOwnerRejectsOwnerAndThirdGoroutine(t *testing.T) {
	skipUnlessEnabled(t)
	r := recordViolations(t)
	var o confine.Owner
	o.Bind()
	defer o.Release()
	o.Lend()
	o.Assert() // the owner itself, while the borrower may run
	v := r.expectOne(t, confine.WrongGoroutine)
	if !v.Lent || !strings.Contains(v.Error(), "which has lent it (Lend without Reclaim)") {
		t.Errorf("owner's Assert while lent: %v", v.Error())
	}

	r = recordViolations(t)
	var borrower uint64
	onNewGoroutine(func() { borrower = goroutineID(); o.Assert() })
	onNewGoroutine(o.Assert) // a third goroutine
	v = r.expectOne(t, confine.WrongGoroutine)
	if v.Borrower != borrower || !strings.Contains(v.Error(), "lent to goroutine") {
		t.Errorf("third goroutine while lent: %+v: %v", v, v.Error())
	}
	o.Reclaim()
}

func TestLendAndReclaimOnlyByTheOwner(t *testing.T) {
	skipUnlessEnabled(t)
	var o confine.Owner
	o.Bind()
	defer o.Release()
	for _, op := range []struct {
		name string
		call func()
	}{{"Lend", o.Lend}, {"Reclaim", o.Reclaim}} {
		r := recordViolations(t)
		onNewGoroutine(op.call)
		if v := r.expectOne(t, confine.WrongGoroutine); v.Op != op.name {
			t.Errorf("%s by another goroutine: got %+v", op.name, v)
		}
	}
}

func TestLendUnboundDoesNothing(t *testing.T) {
	r := recordViolations(t)
	var o confine.Owner
	o.Lend()
	onNewGoroutine(o.Assert)
	o.Reclaim()
	r.expectNone(t)
}
