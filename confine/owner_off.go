//go:build !confine && !race

package confine

// Enabled reports whether this build checks ownership and lock order: false
// without the confine build tag and the race detector, so every call below
// is an empty method that inlines to nothing.
const Enabled = false

// An Owner records which goroutine owns some state. The zero value is
// unbound. See the package documentation for the pattern and the rules. In
// this build it has no size and its methods do nothing.
//
// An Owner must not be copied after first use.
type Owner struct {
	_ noCopy
}

// Bind binds o to the calling goroutine. Call it at the top of the entry
// goroutine, followed by defer o.Release(). It does nothing in this build.
func (o *Owner) Bind() {}

// Release unbinds o, so that a later Bind, on any goroutine, starts afresh.
// It does nothing in this build.
func (o *Owner) Release() {}

// Assert reports a WrongGoroutine violation unless the calling goroutine is
// the one o is bound to (or lent to); an unbound Owner passes. It does
// nothing in this build.
func (o *Owner) Assert() {}

// Lend lends o, until Reclaim, to the goroutine that next asserts it (a
// callback serialized with o's goroutine). It does nothing in this build.
func (o *Owner) Lend() {}

// Reclaim ends a loan started by Lend. It does nothing in this build.
func (o *Owner) Reclaim() {}
