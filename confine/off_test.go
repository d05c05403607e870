//go:build !confine && !race

package confine_test

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/confinelint/confinelint/confine"
)

// Without the confine tag and -race every check compiles away: the calls
// below would all be violations in the enabled build.

func TestOffBuildOwnerIsFree(t *testing.T) {
	if confine.Enabled {
		t.Fatal("Enabled is true in a build without the confine tag or -race")
	}
	if size := unsafe.Sizeof(confine.Owner{}); size != 0 {
		t.Errorf("Owner is %d bytes, want 0", size)
	}
	r := recordViolations(t)
	var o confine.Owner
	p := park(o.Bind)
	defer p.finish()
	o.Assert()  // wrong goroutine
	o.Bind()    // double bind
	o.Release() // release by a non-owner
	r.expectNone(t)
}

func TestOffBuildMutexIsSyncMutex(t *testing.T) {
	if got, want := unsafe.Sizeof(confine.Mutex{}), unsafe.Sizeof(sync.Mutex{}); got != want {
		t.Errorf("Mutex is %d bytes, sync.Mutex %d", got, want)
	}
	if got, want := unsafe.Sizeof(confine.RWMutex{}), unsafe.Sizeof(sync.RWMutex{}); got != want {
		t.Errorf("RWMutex is %d bytes, sync.RWMutex %d", got, want)
	}
	r := recordViolations(t)
	a, b := confine.NewMutex(t.Name()+".A"), confine.NewMutex(t.Name()+".B")
	lockInOrder(a, b)
	lockInOrder(b, a) // an inversion, unchecked here
	r.expectNone(t)
}
