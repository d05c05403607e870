package confine_test

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/confinelint/confinelint/confine"
)

// recorder collects the violations reported while it is installed.
type recorder struct {
	mu  sync.Mutex
	got []confine.Violation
}

// recordViolations replaces the panic with a recorder for the rest of the
// test. Tests that use it must not run in parallel: the hook is global.
func recordViolations(t *testing.T) *recorder {
	t.Helper()
	r := new(recorder)
	useViolationHook(t, r.record)
	return r
}

// useViolationHook installs hook (nil for the panic) until the test or
// benchmark ends.
func useViolationHook(tb testing.TB, hook func(confine.Violation)) {
	previous := confine.SetViolationHook(hook)
	tb.Cleanup(func() { confine.SetViolationHook(previous) })
}

func (r *recorder) record(v confine.Violation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, v)
}

func (r *recorder) violations() []confine.Violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]confine.Violation(nil), r.got...)
}

// expectOne fails the test unless exactly one violation of kind was
// reported, and returns it.
func (r *recorder) expectOne(t *testing.T, kind confine.ViolationKind) confine.Violation {
	t.Helper()
	got := r.violations()
	if len(got) != 1 || got[0].Kind != kind {
		t.Fatalf("got violations %v, want one %v", kinds(got), kind)
	}
	return got[0]
}

func (r *recorder) expectNone(t *testing.T) {
	t.Helper()
	if got := r.violations(); len(got) != 0 {
		t.Fatalf("got violations %v, want none; first: %v", kinds(got), got[0])
	}
}

func kinds(vs []confine.Violation) []confine.ViolationKind {
	var ks []confine.ViolationKind
	for _, v := range vs {
		ks = append(ks, v.Kind)
	}
	return ks
}

// onNewGoroutine runs f on a fresh goroutine and waits for it to return.
func onNewGoroutine(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// parked is a goroutine that ran some setup and now waits to be stopped.
type parked struct {
	id   uint64
	stop chan struct{}
	done chan struct{}
}

// park starts a goroutine that runs setup and then blocks until stopped,
// so that tests can act while it is alive.
func park(setup func()) *parked {
	p := &parked{stop: make(chan struct{}), done: make(chan struct{})}
	ready := make(chan uint64)
	go func() {
		defer close(p.done)
		setup()
		ready <- goroutineID()
		<-p.stop
	}()
	p.id = <-ready
	return p
}

// finish lets the goroutine return and waits for it.
func (p *parked) finish() {
	close(p.stop)
	<-p.done
}

// goroutineID parses the calling goroutine's id the slow, supported way.
func goroutineID() uint64 {
	var buf [64]byte
	s := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	id, err := strconv.ParseUint(string(s[:bytes.IndexByte(s, ' ')]), 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// waitGoroutineGone waits until goroutine id no longer shows in a dump of
// all goroutines: closing a channel on its way out does not mean it has
// finished exiting.
func waitGoroutineGone(t *testing.T, id uint64) {
	t.Helper()
	header := []byte("\ngoroutine " + strconv.FormatUint(id, 10) + " ")
	buf := make([]byte, 1<<20)
	buf[0] = '\n' // so that the first header also follows a newline
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if !bytes.Contains(buf[:1+runtime.Stack(buf[1:], true)], header) {
			return
		}
	}
	t.Fatalf("goroutine %d still running", id)
}
