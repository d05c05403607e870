// Project: rclone/rclone (cloud storage sync tool), v1.49.0 / v1.49.1, 2019.
// Files: fs/accounting/transfer.go (Transfer.Done, TimeRange), stats.go
// (StatsInfo.String, totalDuration, DoneTransferring, Error), cmd/progress.go
// (startProgress, printProgress), fs/log.go, fs/sync, fs/operations (Copy).
// Issue/PR: rclone/rclone#3505 "Transfer using "copy" to Google Drive freezes
// randomly", fixed in v1.49.2 by "accounting: Fix locking in Transfer to avoid
// deadlock with --progress".
//
// Transfer.Done write-locked tr.mu for its whole body and, while holding it,
// closed the Account (waiting for the async read-ahead) and called back into
// StatsInfo (Error / DoneTransferring), which write-lock s.mu. With -P every
// log line goes through printProgress (progressMu), which renders
// StatsInfo.String: it read-locks s.mu and, in totalDuration, calls each
// transfer's TimeRange, which read-locks tr.mu. Another transfer logging an
// error while the first was inside Done closed the cycle. The fix releases
// tr.mu before calling any StatsInfo method.
package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

var LogPrint = func(level string, text string) { fmt.Println(level + ": " + text) }

func LogPrintf(level string, o interface{}, format string, args ...interface{}) {
	LogPrint(level, fmt.Sprintf("%v: ", o)+fmt.Sprintf(format, args...))
}

func Errorf(o interface{}, format string, args ...interface{}) {
	LogPrintf("ERROR", o, format, args...)
}

// AsyncReader reads ahead in a goroutine; the read-ahead after the first
// buffer is a slow network read that Close has to wait for.
type AsyncReader struct {
	io.Reader
	done chan struct{}
}

func newAsyncReader(in io.Reader, readDelay time.Duration) *AsyncReader {
	a := &AsyncReader{Reader: in, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		time.Sleep(readDelay)
	}()
	return a
}

func (a *AsyncReader) Close() error {
	<-a.done
	return nil
}

type StatsInfo struct {
	mu               sync.RWMutex
	errors           int64
	transfers        int64
	transferring     map[string]bool
	startedTransfers []*Transfer
}

var globalStats = &StatsInfo{transferring: map[string]bool{}}

func (s *StatsInfo) NewTransfer(remote string) *Transfer {
	tr := &Transfer{stats: s, remote: remote, startedAt: time.Now()}
	s.mu.Lock()
	s.transferring[remote] = true
	s.startedTransfers = append(s.startedTransfers, tr)
	s.mu.Unlock()
	return tr
}

func (s *StatsInfo) Error(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors++
}

func (s *StatsInfo) DoneTransferring(remote string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.transferring, remote)
	if ok {
		s.transfers++
	}
}

// totalDuration must be called with s.mu held.
func (s *StatsInfo) totalDuration() time.Duration {
	var total time.Duration
	for _, tr := range s.startedTransfers {
		start, end := tr.TimeRange()
		if end.IsZero() {
			end = time.Now()
		}
		total += end.Sub(start)
	}
	return total
}

func (s *StatsInfo) String() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	dt := s.totalDuration()
	return fmt.Sprintf("Transferred: %d, Errors: %d, Transferring: %d, Elapsed time: %v",
		s.transfers, s.errors, len(s.transferring), dt.Round(time.Second))
}

type Transfer struct {
	stats       *StatsInfo
	remote      string
	startedAt   time.Time
	mu          sync.RWMutex
	acc         io.ReadCloser // the *Account
	err         error
	completedAt time.Time
}

func (tr *Transfer) Account(in io.ReadCloser) io.ReadCloser {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.acc = in
	return tr.acc
}

// Done ends the transfer; StatsInfo calls back into Transfer, so no tr.mu here.
func (tr *Transfer) Done(err error) {
	if err != nil {
		tr.stats.Error(err)
		tr.mu.Lock()
		tr.err = err
		tr.mu.Unlock()
	}
	tr.mu.RLock()
	acc := tr.acc
	tr.mu.RUnlock()
	if acc != nil {
		if err := acc.Close(); err != nil {
			LogPrintf("INFO", nil, "can't close account: %+v\n", err)
		}
	}
	tr.mu.Lock()
	tr.completedAt = time.Now()
	tr.mu.Unlock()
	tr.stats.DoneTransferring(tr.remote, err == nil)
}

func (tr *Transfer) TimeRange() (time.Time, time.Time) {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.startedAt, tr.completedAt
}

var progressMu sync.Mutex

func startProgress() {
	LogPrint = func(level string, text string) { printProgress(level + ": " + text) }
}

func printProgress(logMessage string) {
	progressMu.Lock()
	defer progressMu.Unlock()
	fmt.Printf("%s\n%s\n", logMessage, strings.TrimSpace(globalStats.String()))
}

func Copy(dst, remote string, size int, fail bool, in io.Reader) error {
	if fail {
		err := errors.New("googleapi: Error 403: User rate limit exceeded")
		Errorf(remote, "Failed to copy: %v", err)
		return err
	}
	_, err := io.ReadFull(in, make([]byte, size))
	return err
}

type syncCopyMove struct{ wg sync.WaitGroup }

func (s *syncCopyMove) pairCopyOrMove(remote, data string, fail bool, readDelay time.Duration) {
	defer s.wg.Done()
	tr := globalStats.NewTransfer(remote)
	in := tr.Account(newAsyncReader(strings.NewReader(data), readDelay))
	err := Copy("gdrive:backup", remote, len(data), fail, in)
	tr.Done(err)
}

func main() {
	startProgress()
	s := &syncCopyMove{}
	s.wg.Add(2)
	go s.pairCopyOrMove("photos/a.jpg", "0123", false, 200*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	go s.pairCopyOrMove("photos/b.jpg", "cd", true, 0)
	s.wg.Wait()
	fmt.Println(globalStats.String())
}
