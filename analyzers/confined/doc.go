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
// See docs/checks.md for every rule with a wrong and a right example.
package confined
