// Package unblocker: a channel receive under a lock is reported only when
// every goroutine that can unblock it takes the lock (net.Pipe's deadline:
// the time.AfterFunc callback closes the channel without the lock).
package unblocker

import (
	"sync"
	"time"
)

type deadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	cancel chan struct{}
}

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.cancel // silent: the timer callback closes it, lock-free
	}
	d.timer = nil
	if dur := time.Until(t); dur > 0 {
		d.cancel = make(chan struct{})
		d.timer = time.AfterFunc(dur, func() {
			close(d.cancel)
		})
		return
	}
	close(d.cancel)
}

// SetDeadline is exported: a root of its own.
func (d *deadline) SetDeadline(t time.Time) { d.set(t) }

// The peer goroutine reaches set (which closes cancel under mu) through
// the exported SetDeadline; the AfterFunc callback still unblocks the
// receive without mu.
func Serve(d *deadline) {
	go func() {
		d.SetDeadline(time.Now())
	}()
}
