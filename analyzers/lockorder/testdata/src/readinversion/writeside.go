package readinversion

import (
	"fmt"
	"sync"
	"time"
)

// Two witnesses of one order: Done read-locks the stats through a log
// line (the progress printer's String) and write-locks them to count
// the transfer done, both under the transfer's lock; String holds the
// stats' read lock and read-locks each transfer. Of the cycles over the
// same two locks, the one through the write lock is reported: it needs
// no waiting writer (rclone's -P progress printer).
type stats struct {
	mu        sync.RWMutex
	done      int
	transfers []*transfer
}

var globalStats = &stats{}

func (s *stats) String() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var total time.Duration
	for _, tr := range s.transfers {
		total += tr.elapsed()
	}
	return fmt.Sprint(s.done, total)
}

func (s *stats) doneTransferring() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done++
}

func (s *stats) add(tr *transfer) {
	s.mu.Lock()
	s.transfers = append(s.transfers, tr)
	s.mu.Unlock()
}

type transfer struct {
	mu    sync.RWMutex
	stats *stats
	start time.Time
	end   time.Time
}

func (tr *transfer) elapsed() time.Duration {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.end.Sub(tr.start)
}

func logProgress(msg string) { fmt.Println(msg, globalStats.String()) }

func (tr *transfer) Done(err error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if err != nil {
		logProgress("failed")
	}
	tr.stats.doneTransferring() // want `lock order inversion: stats.mu then transfer.mu in stats.String .* but transfer.mu then stats.mu in transfer.Done \(writeside.go:\d+ -> writeside.go:\d+ via stats.doneTransferring\) \[lock-order\]`
	tr.end = time.Now()
}
