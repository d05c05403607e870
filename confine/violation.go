package confine

import (
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
)

// ViolationKind says which rule a Violation broke.
type ViolationKind uint8

const (
	// WrongGoroutine: Assert or Release on a goroutine the Owner is not
	// bound to.
	WrongGoroutine ViolationKind = iota + 1
	// DoubleBind: Bind while the Owner is bound to another goroutine that is
	// still running.
	DoubleBind
	// LockOrderInversion: a lock acquired while holding another, where the
	// opposite order (directly or through other classes) was seen before.
	LockOrderInversion
	// RecursiveLock: a goroutine locking a Mutex or RWMutex it already holds.
	RecursiveLock
)

func (k ViolationKind) String() string {
	switch k {
	case WrongGoroutine:
		return "WrongGoroutine"
	case DoubleBind:
		return "DoubleBind"
	case LockOrderInversion:
		return "LockOrderInversion"
	case RecursiveLock:
		return "RecursiveLock"
	}
	return fmt.Sprintf("ViolationKind(%d)", uint8(k))
}

// A Violation describes one broken rule. It is passed by value to the hook,
// or panicked with when there is none; it implements error, and formats its
// message and stacks only when Error is called.
type Violation struct {
	Kind ViolationKind
	// Op is the call that failed: "Assert", "Bind", "Release", "Lock",
	// "RLock".
	Op string
	// Goroutine is the id of the goroutine that made the call.
	Goroutine uint64
	// Owner is the id of the goroutine the Owner is bound to
	// (WrongGoroutine, DoubleBind).
	Owner uint64
	// PC is a return address into the function that made the call, for
	// runtime.CallersFrames; 0 if unknown.
	PC uintptr
	// BoundAt is a return address into the function that bound the Owner
	// (WrongGoroutine, DoubleBind): who owns the state; 0 if unknown.
	BoundAt uintptr
	// Lent is set when the Owner was lent (between Lend and Reclaim), and
	// Borrower is the goroutine it was lent to, 0 if none has asserted yet.
	Lent     bool
	Borrower uint64
	// Class is the lock class being acquired (LockOrderInversion,
	// RecursiveLock).
	Class string
	// Cycle holds the acquisitions that close a lock-order cycle:
	// Cycle[0] is the one being made now, the rest are the earlier ones
	// that ordered the same classes the other way, in path order.
	Cycle []LockEdge
}

// A LockEdge records that a goroutine acquired one lock class while holding
// another.
type LockEdge struct {
	Held, Acquired string
	Goroutine      uint64
	// Stack holds return addresses (runtime.Callers) at the acquisition.
	Stack []uintptr
}

func (v Violation) Error() string {
	var b strings.Builder
	b.WriteString("confine: ")
	if fn := functionName(v.PC); fn != "" {
		b.WriteString(fn + ": ")
	}
	switch v.Kind {
	case WrongGoroutine:
		fmt.Fprintf(&b, "%s on goroutine %d, but the owner is bound to goroutine %d", v.Op, v.Goroutine, v.Owner)
		writeBoundAt(&b, v.BoundAt)
		switch {
		case v.Lent && v.Goroutine == v.Owner:
			b.WriteString(", which has lent it (Lend without Reclaim): the borrower may be running")
		case v.Lent && v.Borrower != 0:
			fmt.Fprintf(&b, " and lent to goroutine %d", v.Borrower)
		}
	case DoubleBind:
		fmt.Fprintf(&b, "%s on goroutine %d, but the owner is still bound to running goroutine %d", v.Op, v.Goroutine, v.Owner)
		writeBoundAt(&b, v.BoundAt)
	case RecursiveLock:
		fmt.Fprintf(&b, "%s of lock class %q on goroutine %d, which already holds it (self-deadlock)",
			v.Op, v.Class, v.Goroutine)
	case LockOrderInversion:
		writeInversion(&b, v)
	default:
		fmt.Fprintf(&b, "%v on goroutine %d", v.Kind, v.Goroutine)
	}
	return b.String()
}

func writeInversion(b *strings.Builder, v Violation) {
	fmt.Fprintf(b, "lock order inversion: %s of %q on goroutine %d", v.Op, v.Class, v.Goroutine)
	if len(v.Cycle) == 0 {
		return
	}
	order := []string{v.Cycle[0].Acquired}
	for _, e := range v.Cycle[1:] {
		order = append(order, e.Acquired)
	}
	fmt.Fprintf(b, " while holding %q; the opposite order %s was seen before",
		v.Cycle[0].Held, strings.Join(quoteAll(order), " -> "))
	for i, e := range v.Cycle {
		verb := "acquired"
		if i == 0 {
			verb = "acquiring"
		}
		fmt.Fprintf(b, "\n\ngoroutine %d %s %q while holding %q:", e.Goroutine, verb, e.Acquired, e.Held)
		frames := runtime.CallersFrames(e.Stack)
		for {
			f, more := frames.Next()
			if f.Function != "" && !strings.HasPrefix(f.Function, confinePrefix) {
				fmt.Fprintf(b, "\n\t%s\n\t\t%s:%d", f.Function, f.File, f.Line)
			}
			if !more {
				break
			}
		}
	}
}

// writeBoundAt names where the owner was bound: " (bound in pkg.(*T).run
// at file.go:42)".
func writeBoundAt(b *strings.Builder, pc uintptr) {
	if pc == 0 {
		return
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	if f.Function == "" {
		return
	}
	fmt.Fprintf(b, " (bound in %s at %s:%d)", f.Function, filepath.Base(f.File), f.Line)
}

func quoteAll(names []string) []string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return quoted
}

// confinePrefix starts the names of this package's functions, which
// stacks and call-site class names leave out.
var confinePrefix = reflect.TypeFor[Violation]().PkgPath() + "."

func functionName(pc uintptr) string {
	if pc == 0 {
		return ""
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	return f.Function
}

// violationHook holds the hook installed by SetViolationHook; nil means
// panic.
var violationHook atomic.Pointer[func(Violation)]

// SetViolationHook makes confine call hook with each violation instead of
// panicking, and returns the hook it replaces (nil for the default panic).
// A nil hook restores the panic. The hook runs on the offending goroutine,
// synchronously; it may log, count, or panic itself. In builds without
// checks it is never called.
func SetViolationHook(hook func(Violation)) (previous func(Violation)) {
	var next *func(Violation)
	if hook != nil {
		next = &hook
	}
	if old := violationHook.Swap(next); old != nil {
		return *old
	}
	return nil
}
