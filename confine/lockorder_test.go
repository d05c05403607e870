package confine_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/confinelint/confinelint/confine"
)

// lockOrderTest starts a lock-order test: it needs the checks compiled in,
// a fresh graph (the graph is global and outlives a test run with -count),
// and a recorder.
func lockOrderTest(t *testing.T) *recorder {
	t.Helper()
	skipUnlessEnabled(t)
	confine.ResetLockOrder()
	return recordViolations(t)
}

func classes(t *testing.T, names ...string) []*confine.Mutex {
	var ms []*confine.Mutex
	for _, n := range names {
		ms = append(ms, confine.NewMutex(t.Name()+"."+n))
	}
	return ms
}

//go:noinline
func lockInOrder(ms ...sync.Locker) {
	for _, m := range ms {
		m.Lock()
	}
	for i := len(ms) - 1; i >= 0; i-- {
		ms[i].Unlock()
	}
}

func TestLockOrderInversionReported(t *testing.T) {
	r := lockOrderTest(t)
	ab := classes(t, "A", "B")
	a, b := ab[0], ab[1]

	var first, second uint64
	// One goroutine after the other: the inversion is found from the
	// recorded order, with no need to ever deadlock.
	onNewGoroutine(func() { first = goroutineID(); lockAThenB(a, b) })
	onNewGoroutine(func() { second = goroutineID(); lockBThenA(a, b) })

	v := r.expectOne(t, confine.LockOrderInversion)
	if v.Class != t.Name()+".A" || v.Goroutine != second || len(v.Cycle) != 2 {
		t.Fatalf("got %+v, want goroutine %d acquiring A with a 2-edge cycle", v, second)
	}
	now, before := v.Cycle[0], v.Cycle[1]
	if now.Held != t.Name()+".B" || now.Acquired != t.Name()+".A" || now.Goroutine != second {
		t.Errorf("current edge %+v, want B -> A on goroutine %d", now, second)
	}
	if before.Held != t.Name()+".A" || before.Acquired != t.Name()+".B" || before.Goroutine != first {
		t.Errorf("earlier edge %+v, want A -> B on goroutine %d", before, first)
	}
	msg := v.Error()
	for _, want := range []string{
		"lock order inversion", "lockAThenB", "lockBThenA",
		fmt.Sprintf("goroutine %d", first), fmt.Sprintf("goroutine %d", second),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message does not mention %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "confine.(*lockState)") {
		t.Errorf("message shows confine's own frames:\n%s", msg)
	}
	t.Logf("message:\n%s", msg)

	lockBThenA(a, b) // the same inversion again is not reported twice
	if n := len(r.violations()); n != 1 {
		t.Errorf("%d violations after repeating the inversion, want 1", n)
	}
}

//go:noinline
func lockAThenB(a, b *confine.Mutex) { lockInOrder(a, b) }

//go:noinline
func lockBThenA(a, b *confine.Mutex) { lockInOrder(b, a) }

func TestConsistentOrderNotReported(t *testing.T) {
	r := lockOrderTest(t)
	abc := classes(t, "A", "B", "C")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				lockInOrder(abc[0], abc[1], abc[2])
				lockInOrder(abc[0], abc[2])
				lockInOrder(abc[1], abc[2])
			}
		})
	}
	wg.Wait()
	r.expectNone(t)
}

func TestTransitiveCycleReported(t *testing.T) {
	r := lockOrderTest(t)
	abc := classes(t, "A", "B", "C")
	a, b, c := abc[0], abc[1], abc[2]
	onNewGoroutine(func() { lockInOrder(a, b) })
	onNewGoroutine(func() { lockInOrder(b, c) })
	r.expectNone(t)
	onNewGoroutine(func() { lockInOrder(c, a) }) // A -> B -> C -> A

	v := r.expectOne(t, confine.LockOrderInversion)
	var path []string
	for _, e := range v.Cycle {
		path = append(path, strings.TrimPrefix(e.Held, t.Name()+".")+"->"+strings.TrimPrefix(e.Acquired, t.Name()+"."))
	}
	if got := strings.Join(path, " "); got != "C->A A->B B->C" {
		t.Errorf("cycle %s, want C->A A->B B->C", got)
	}
}

func TestReadLockInversionReported(t *testing.T) {
	r := lockOrderTest(t)
	a, b := confine.NewRWMutex(t.Name()+".A"), confine.NewRWMutex(t.Name()+".B")
	onNewGoroutine(func() { lockInOrder(a.RLocker(), b.RLocker()) })
	onNewGoroutine(func() { lockInOrder(b, a.RLocker()) })
	if v := r.expectOne(t, confine.LockOrderInversion); v.Op != "RLock" {
		t.Errorf("op %q, want RLock", v.Op)
	}
}

func TestZeroValueMutexClassIsFirstLockSite(t *testing.T) {
	r := lockOrderTest(t)
	var a, b confine.Mutex
	onNewGoroutine(func() { firstLockOfA(&a); firstLockOfB(&b) })
	onNewGoroutine(func() { lockInOrder(&a, &b) })
	onNewGoroutine(func() { lockInOrder(&b, &a) })
	v := r.expectOne(t, confine.LockOrderInversion)
	if !strings.Contains(v.Class, "firstLockOfA") || !strings.Contains(v.Cycle[0].Held, "firstLockOfB") {
		t.Errorf("classes %q and %q, want them named after firstLockOfA and firstLockOfB", v.Class, v.Cycle[0].Held)
	}
}

// TestZeroValueMutexesFirstLockedOnOneLine: a helper that locks every
// mutex is the first Lock site of both; they are still two classes, and
// their inversion is found.
func TestZeroValueMutexesFirstLockedOnOneLine(t *testing.T) {
	r := lockOrderTest(t)
	var a, b confine.Mutex
	onNewGoroutine(func() { lockInOrder(&a, &b) })
	onNewGoroutine(func() { lockInOrder(&b, &a) })
	v := r.expectOne(t, confine.LockOrderInversion)
	if v.Class == v.Cycle[0].Held || !strings.Contains(v.Class+v.Cycle[0].Held, " #2") {
		t.Errorf("classes %q and %q: want two, the second numbered", v.Class, v.Cycle[0].Held)
	}
}

//go:noinline
func firstLockOfA(m *confine.Mutex) {
	m.Lock()
	defer m.Unlock()
}

//go:noinline
func firstLockOfB(m *confine.Mutex) {
	m.Lock()
	defer m.Unlock()
}

func TestRecursiveLockReportedBeforeBlocking(t *testing.T) {
	r := lockOrderTest(t)
	useViolationHook(t, func(v confine.Violation) {
		r.record(v)
		panic(v) // the hook may panic: here it saves Lock from deadlocking
	})
	m := confine.NewMutex(t.Name())
	m.Lock()
	func() {
		defer func() { recover() }()
		m.Lock() //confined:ignore the recursive lock is the point: the runtime validator must report it before blocking
	}()
	m.Unlock()
	if v := r.expectOne(t, confine.RecursiveLock); v.Class != t.Name() {
		t.Errorf("class %q, want %q", v.Class, t.Name())
	}
}

func TestRecursiveReadLockReported(t *testing.T) {
	r := lockOrderTest(t)
	m := confine.NewRWMutex(t.Name())
	m.RLock()
	defer m.RUnlock()
	// Deadlocks if a writer queues in between: the runtime validator must say so.
	m.RLock() //confined:ignore the recursive read lock is what this test feeds the validator
	defer m.RUnlock()
	r.expectOne(t, confine.RecursiveLock)
}

func TestUnlockOnAnotherGoroutineReleasesHolder(t *testing.T) {
	r := lockOrderTest(t)
	ab := classes(t, "A", "B")
	a, b := ab[0], ab[1]
	locked, unlocked, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		a.Lock()
		close(locked)
		<-unlocked
		// Had A stayed on this goroutine's books, this would record A -> B...
		lockInOrder(b)
	}()
	<-locked
	onNewGoroutine(a.Unlock) // allowed, as with sync.Mutex
	close(unlocked)
	<-done
	// ...and this would look like an inversion.
	onNewGoroutine(func() { lockInOrder(b, a) })
	r.expectNone(t)
}

func TestTryLockCountsAsHeldButIsNotChecked(t *testing.T) {
	r := lockOrderTest(t)
	ab := classes(t, "A", "B")
	a, b := ab[0], ab[1]
	onNewGoroutine(func() { lockInOrder(a, b) })
	onNewGoroutine(func() {
		b.Lock()
		defer b.Unlock()
		if !a.TryLock() { // B then A, but TryLock cannot deadlock
			t.Error("TryLock failed on an unlocked mutex")
			return
		}
		defer a.Unlock()
	})
	r.expectNone(t)
	onNewGoroutine(func() {
		if !b.TryLock() {
			t.Error("TryLock failed on an unlocked mutex")
			return
		}
		defer b.Unlock()
		a.Lock() // B is held via TryLock, so B -> A is checked here
		defer a.Unlock()
	})
	r.expectOne(t, confine.LockOrderInversion)
}
