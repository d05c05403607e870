// Project: grafana/k6 (ui/pb progress bars)
// Bug: ProgressBar.Modify held pb.mutex (write lock) and logged the bar with
// "%s"; fmt calls ProgressBar.String(), which renders under pb.mutex.RLock on
// the same goroutine: self-deadlock through String() invoked by the logger.
// Fix: log fields copied while the lock is held (pb.id, pb.status) instead of
// formatting the bar itself, so String() is never reached under the lock.

package main

import (
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"
)

type Status rune

const (
	Running     Status = '↻'
	Interrupted Status = '✗'
	Done        Status = '✓'
)

type fieldLogger struct{ out *log.Logger }

func (l fieldLogger) Debugf(format string, args ...interface{}) {
	_ = l.out.Output(2, "level=debug msg=\""+fmt.Sprintf(format, args...)+"\"")
}

type ProgressBar struct {
	id       string
	mutex    sync.RWMutex
	width    int
	status   Status
	left     func() string
	progress func() (float64, []string)
	logger   fieldLogger
}

type ProgressBarOption func(*ProgressBar)

func WithStatus(s Status) ProgressBarOption { return func(pb *ProgressBar) { pb.status = s } }

func WithProgress(f func() (float64, []string)) ProgressBarOption {
	return func(pb *ProgressBar) { pb.progress = f }
}

func New(id string, options ...ProgressBarOption) *ProgressBar {
	pb := &ProgressBar{id: id, width: 40, status: Running,
		left:   func() string { return id },
		logger: fieldLogger{out: log.New(os.Stderr, "", 0)}}
	for _, o := range options {
		o(pb)
	}
	return pb
}

// Modify changes the bar's options; used by executors when they finish.
func (pb *ProgressBar) Modify(options ...ProgressBarOption) {
	pb.mutex.Lock()
	defer pb.mutex.Unlock()
	for _, o := range options {
		o(pb)
	}
	pb.logger.Debugf("modified progress bar %s", pb)
}

func (pb *ProgressBar) renderLocked() string {
	p, right := 0.0, []string(nil)
	if pb.progress != nil {
		p, right = pb.progress()
	}
	filled := int(p * float64(pb.width))
	if filled > pb.width {
		filled = pb.width
	}
	bar := strings.Repeat("=", filled) + strings.Repeat("-", pb.width-filled)
	return fmt.Sprintf("%s %c [%s] %s", pb.left(), pb.status, bar, strings.Join(right, " "))
}

// String renders the bar; used by the UI refresher and by loggers.
func (pb *ProgressBar) String() string {
	pb.mutex.RLock()
	defer pb.mutex.RUnlock()
	return pb.renderLocked()
}

func main() {
	var mu sync.Mutex
	iters := 0
	pb := New("default", WithProgress(func() (float64, []string) {
		mu.Lock()
		defer mu.Unlock()
		return float64(iters) / 10, []string{fmt.Sprintf("%d/10 iters", iters)}
	}))

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // executor
		defer wg.Done()
		for i := 0; i < 10; i++ {
			mu.Lock()
			iters++
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
		pb.Modify(WithStatus(Done))
	}()
	wg.Wait()
	fmt.Println(pb.String())
}
