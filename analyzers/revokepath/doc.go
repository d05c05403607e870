// Package revokepath defines an Analyzer that reports commits that can run without the mailbox drain, and commits run inline off the owning goroutine.
//
// # Analyzer revokepath
//
// revokepath: reports commits that can run without the mailbox drain, and commits run inline off the owning goroutine.
//
// A //confined:commit publishes progress derived from ROLE state (offsets,
// checkpoints, acks); a //confined:drain applies the completions waiting in
// ROLE's mailbox to that state. Workers finish records and send completions
// to the mailbox; only the drain makes them count. A commit that runs
// without a fresh drain publishes output whose input offset it omits.
//
// Rule commit-without-drain: on every path from a goroutine root to a
// commit, a drain of the same role must run after the last acquisition of
// every lock the commit requires (//confined:requires), or, for a commit
// that requires no lock, before it. A drain taken before the lock does not
// count (completions arrive in between), nor a drain on some paths only, nor
// a check such as len(mailbox) == 0. A function that commits without
// draining passes the obligation to its callers: it is discharged where a
// caller has drained, reported at the call where a root (entry, callback,
// goroutine body) has not, and exported to importing packages as a fact
// for exported functions. The message names the path:
//
//	commit Consumer.commit (publishes control progress) can run without a
//	drain of control's mailbox after Consumer.mu is taken:
//	Consumer.onRevoked -> Consumer.commit [commit-without-drain]
//
// Rule inline-commit: a commit reached from a goroutine that is not ROLE's
// (a rebalance callback such as kgo.OnPartitionsRevoked, a timer, a go
// statement, another role) is reported as an inline commit, with the chain
// from that root; the missing drain on that path is not reported again.
// Draining from the callback is not the fix: the drain mutates ROLE state
// from a foreign goroutine, which confined reports. The fix is a handoff:
// the callback posts a commit request to ROLE's goroutine, which locks,
// drains and commits, and the callback waits for the answer with a bound:
//
//	func (c *Consumer) onRevoked(ctx context.Context, _ *kgo.Client, _ map[string][]int32) {
//		req := commitRequest{done: make(chan error, 1)}
//		select {
//		case c.requests <- req: // control's mailbox for requests
//		case <-time.After(5 * time.Second):
//			return
//		}
//		select {
//		case <-req.done:
//		case <-time.After(5 * time.Second):
//		}
//	}
//
//	// in control's loop:
//	case req := <-c.requests:
//		c.mu.Lock()
//		c.drain()
//		req.done <- c.commit(ctx)
//		c.mu.Unlock()
//
// Precision: locks are tracked by class (the declaring field or var), so
// two instances of a struct share one lock; a deferred call counts where
// the defer statement is; function values passed to other calls are assumed
// to run synchronously at that call, after the callee's own lock effects.
//
// See docs/checks.md for every rule with a wrong and a right example.
package revokepath
