// Package revokepath defines an Analyzer that reports commits that can run without the mailbox drain, and commits run inline off the owning goroutine.
//
// # Analyzer revokepath
//
// revokepath: reports commits that can run without the mailbox drain, and commits run inline off the owning goroutine.
//
// A //confined:commit publishes progress derived from ROLE state; on every
// path from a root to it, a //confined:drain of the same role must run after
// the last acquisition of every lock the commit requires. A commit reached
// from a foreign goroutine (a rebalance callback, another role) is reported
// as an inline commit: hand the request to ROLE's goroutine instead.
//
// See docs/checks.md for every rule with a wrong and a right example.
package revokepath
