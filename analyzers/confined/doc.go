// Package confined defines an Analyzer that reports state confined to one goroutine role that is touched from another goroutine.
//
// # Analyzer confined
//
// confined: reports state confined to one goroutine role that is touched from another goroutine.
//
// It reads //confined:control, entry, callback, spawns and any directives,
// finds where goroutines start (entries, go statements, asynchronous APIs
// such as time.AfterFunc or kgo.OnPartitionsRevoked, handler interfaces,
// callbacks), infers the roles of unexported functions from their callers,
// and reports every read or write of ROLE state, and every call of a ROLE
// function, from code that can run on another goroutine, with the chain of
// calls from the root. Exported and escaping functions that touch ROLE
// state must declare their role, and pair the declaration with a runtime
// assertion (confine.Owner).
//
// Findings, by rule id:
//
//   - foreign-access: ROLE state read or written, or a ROLE function
//     called, on a goroutine that is not ROLE's (a go statement, an
//     asynchronous API, a handler, a callback, another role's entry). At
//     the access, with the chain from the root, e.g.
//     "c.inflight is confined to control but written on the goroutine
//     started by kgo.OnPartitionsRevoked: onRevoked -> resetCounters ->
//     c.inflight".
//   - undeclared-role: an exported or escaping function, whose callers are
//     unknown, touches ROLE state itself or through unexported callees
//     without declaring //confined:control ROLE. At the func line, with a
//     suggested fix adding the directive. Calls of role functions that
//     assert their owner at runtime do not count; tests, benchmarks, fuzz
//     tests and examples are exempt.
//   - missing-bind: a //confined:entry never calls Bind() on a
//     confine.Owner (in its body or a function it calls).
//   - missing-assert: an exported or escaping //confined:control function
//     never calls Assert(). An Assert() in an undeclared function declares
//     it: its role is that of the Owner field or var asserted (control when
//     unannotated).
//   - owned-handoff: a pointer, map or slice read out of ROLE state handed
//     to a go statement (or bound as the receiver of a method value given
//     to an asynchronous API) whose function reads or writes it. At the
//     hand-off, with the chain to that access.
//   - use-after-send: such a reference touched by its sender after a send
//     on a channel handed it to the receiver.
//   - any-touches-state: a //confined:any function (or one it calls)
//     touches ROLE state.
//   - unused-ignore: a //confined:ignore that silenced nothing.
//
// A reference read out of ROLE state is ROLE's too: a closure on another
// goroutine that uses it (captured, or passed on to a function that
// touches it) makes foreign-access findings whose chain names the state
// it was read from ("Consumer.dispatch.func1 -> c.parts -> ps.inflight").
//
// Not violations: writes to an object allocated in the same function
// before it is published (construction: before a go statement, channel
// send, store into shared memory or asynchronous call hands it out, on
// any path); accesses through a value received from a channel (the
// receiver owns it); copies taken out of owned state (values, structs of
// values, maps.Clone, slices.Clone); fields of a type that guards itself
// (a struct holding a lock) reached through an owned reference.
//
// Flags: -confined.async=pkg.Func:argN,(*pkg.T).Method:argN adds
// asynchronous APIs whose function argument runs on another goroutine.
//
// See docs/checks.md for every rule with a wrong and a right example.
package confined
