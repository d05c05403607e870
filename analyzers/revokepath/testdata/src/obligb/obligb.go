// Package obligb calls obliga's helpers, with and without draining.
package obligb

import (
	"time"

	"obliga"
)

type Loop struct {
	c *obliga.Consumer
}

//confined:entry
func (l *Loop) run(tick <-chan struct{}) {
	for range tick {
		l.c.Mu.Lock()
		l.c.CommitLocked() // want `commit obliga\.Consumer\.commit \(publishes control progress\) can run without a drain of control's mailbox after Consumer\.Mu is taken: Loop\.run -> obliga\.Consumer\.CommitLocked -> obliga\.Consumer\.commit \[commit-without-drain\]`
		l.c.Mu.Unlock()

		l.c.Mu.Lock()
		l.c.Drain()
		l.c.CommitLocked() // correct: drained after the lock
		l.c.Mu.Unlock()

		l.c.Publish() // correct: drained above
		l.c.Flush()
	}
}

//confined:entry
func (l *Loop) publishOnly(tick <-chan struct{}) {
	for range tick {
		l.c.Publish() // want `commit obliga\.Consumer\.publish \(publishes control progress\) can run without a drain of control's mailbox before it: Loop\.publishOnly -> obliga\.Consumer\.Publish -> obliga\.Consumer\.publish`
	}
}

// start runs flush on a timer: the commit inside Flush runs inline there.
func (l *Loop) start() {
	time.AfterFunc(time.Second, l.flush)
}

func (l *Loop) flush() {
	l.c.Flush() // want `obliga\.Consumer\.commit publishes control progress but runs inline on the goroutine started by time\.AfterFunc: Loop\.flush -> obliga\.Consumer\.Flush -> obliga\.Consumer\.commit; hand the commit to control's goroutine \(post a request to its mailbox and wait with a bound\) instead of committing here \[inline-commit\]`
}
