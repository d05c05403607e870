// Package consumer turns order records into shipments. One control
// goroutine (Run) owns the consumer's progress; workers process records and
// report through the mailbox; rebalance callbacks, the status handler and
// the price refresher ask the control goroutine for what they need.
package consumer

// The shared worker pool runs its tasks on its own goroutines.
//
//confined:async example.com/shop/pool.(*Pool).Go arg0
