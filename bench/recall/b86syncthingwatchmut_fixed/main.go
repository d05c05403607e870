// Project: syncthing/syncthing (lib/model/folder.go, lib/model/model.go, lib/model/folder_summary.go), v1.2.x, August 2019.
// Bug: folder.scanOnWatchErr, run by the monitorWatch goroutine when a failed
// watcher is retried, held f.watchMut while calling f.Delay(0), a blocking send
// on scanDelay that only the folder's Serve loop receives, while that loop was
// in scanSubdirs, whose failed health check goes through setError to stopWatch
// and locks f.watchMut. The folder summary service then blocked on watchMut
// inside model.WatchError with m.fmut read-locked, and ClusterConfig's
// m.fmut.Lock queued behind it (issue #5929, fixed by PR #5944: copy watchErr
// under the lock and call Delay after unlocking).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	errWatchNotStarted   = errors.New("not started")
	errFolderPathMissing = errors.New("folder path missing")
)

const watchRetryInterval = 10 * time.Millisecond // time.Minute in syncthing

type folderConfiguration struct {
	ID               string
	FSWatcherEnabled bool
}

// fakeFilesystem stands in for fs.Filesystem; its root can disappear.
type fakeFilesystem struct {
	missing atomic.Bool
	errs    chan error
}

func (fs *fakeFilesystem) CheckPath() error {
	if fs.missing.Load() {
		return errFolderPathMissing
	}
	return nil
}

func (fs *fakeFilesystem) Watch(ctx context.Context) (<-chan error, error) {
	return fs.errs, fs.CheckPath()
}

type stateTracker struct {
	mut sync.Mutex
	err error
}

func (s *stateTracker) setError(err error) { s.mut.Lock(); s.err = err; s.mut.Unlock() }

func (s *stateTracker) getError() error { s.mut.Lock(); defer s.mut.Unlock(); return s.err }

type folder struct {
	stateTracker
	folderConfiguration
	model  *model
	fs     *fakeFilesystem
	ctx    context.Context
	cancel context.CancelFunc

	scanTimer *time.Timer
	scanDelay chan time.Duration
	stopped   chan struct{}

	watchCancel context.CancelFunc
	watchErr    error
	watchMut    sync.Mutex
}

func newFolder(m *model, fs *fakeFilesystem, cfg folderConfiguration) *folder {
	ctx, cancel := context.WithCancel(context.Background())
	return &folder{folderConfiguration: cfg, model: m, fs: fs, ctx: ctx, cancel: cancel,
		scanTimer: time.NewTimer(5 * time.Millisecond), // the first scan is done right away
		scanDelay: make(chan time.Duration), stopped: make(chan struct{}), watchCancel: func() {}}
}

func (f *folder) Serve() {
	defer close(f.stopped)
	if f.FSWatcherEnabled && f.CheckHealth() == nil {
		f.startWatch()
	}
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.scanTimer.C:
			fmt.Println("scan:", f.scanSubdirs(nil))
		case next := <-f.scanDelay:
			f.scanTimer.Reset(next)
		}
	}
}

func (f *folder) Delay(next time.Duration) { f.scanDelay <- next }

func (f *folder) Stop() { f.cancel(); <-f.stopped }

func (f *folder) CheckHealth() error {
	err := f.fs.CheckPath()
	f.setError(err)
	return err
}

func (f *folder) scanSubdirs(subDirs []string) error {
	if err := f.CheckHealth(); err != nil {
		return err
	}
	batchFn := func(files []string) error { return f.CheckHealth() }
	for i := 0; i < 3; i++ { // scanner.Walk hashing a large folder
		time.Sleep(20 * time.Millisecond)
		if err := batchFn([]string{fmt.Sprintf("file%d", i)}); err != nil {
			return err
		}
	}
	return nil
}

func (f *folder) WatchError() error { f.watchMut.Lock(); defer f.watchMut.Unlock(); return f.watchErr }

// stopWatch immediately aborts watching and may be called asynchronously
func (f *folder) stopWatch() {
	f.watchMut.Lock()
	f.watchCancel()
	f.watchErr = errWatchNotStarted
	f.watchMut.Unlock()
}

func (f *folder) startWatch() {
	ctx, cancel := context.WithCancel(f.ctx)
	f.watchMut.Lock()
	f.watchCancel = cancel
	f.watchMut.Unlock()
	go f.monitorWatch(ctx)
}

func (f *folder) monitorWatch(ctx context.Context) {
	failTimer := time.NewTimer(0)
	var errChan <-chan error
	for {
		select {
		case <-failTimer.C:
			var err error
			errChan, err = f.fs.Watch(ctx)
			f.scanOnWatchErr()
			f.setWatchError(err)
			if err != nil {
				failTimer.Reset(watchRetryInterval)
			}
		case err := <-errChan:
			f.setWatchError(err)
			errChan = nil
			failTimer.Reset(watchRetryInterval)
		case <-ctx.Done():
			return
		}
	}
}

func (f *folder) setWatchError(err error) { f.watchMut.Lock(); f.watchErr = err; f.watchMut.Unlock() }

// scanOnWatchErr schedules a full scan immediately if an error occurred while watching.
func (f *folder) scanOnWatchErr() {
	f.watchMut.Lock()
	err := f.watchErr
	f.watchMut.Unlock()
	if err != nil && err != errWatchNotStarted {
		f.Delay(0)
	}
}

func (f *folder) setError(err error) {
	select {
	case <-f.ctx.Done():
		return
	default:
	}
	oldErr := f.stateTracker.getError()
	if (err != nil && oldErr != nil && oldErr.Error() == err.Error()) || (err == nil && oldErr == nil) {
		return
	}
	if f.FSWatcherEnabled && err != nil {
		f.stopWatch()
	}
	f.stateTracker.setError(err)
}

type service interface {
	Serve()
	WatchError() error
}

type model struct {
	fmut          sync.RWMutex
	folderRunners map[string]service
	remoteFolders map[string][]string
}

func (m *model) WatchError(folder string) error {
	m.fmut.RLock()
	defer m.fmut.RUnlock()
	runner, ok := m.folderRunners[folder]
	if !ok {
		return nil
	}
	return runner.WatchError()
}

func (m *model) ClusterConfig(deviceID string, folders []string) {
	m.fmut.Lock() // a write lock over the whole message before PR #5943
	defer m.fmut.Unlock()
	m.remoteFolders[deviceID] = folders
}

type folderSummaryService struct{ model *model }

func (c *folderSummaryService) Summary(folder string) map[string]interface{} {
	res := make(map[string]interface{})
	if err := c.model.WatchError(folder); err != nil {
		res["watchError"] = err.Error()
	}
	return res
}

func main() {
	fs := &fakeFilesystem{errs: make(chan error, 1)}
	m := &model{folderRunners: map[string]service{}, remoteFolders: map[string][]string{}}
	f := newFolder(m, fs, folderConfiguration{ID: "default", FSWatcherEnabled: true})
	m.fmut.Lock()
	m.folderRunners[f.ID] = f
	m.fmut.Unlock()
	go f.Serve()
	time.Sleep(10 * time.Millisecond) // the initial scan of a large folder is running
	fs.missing.Store(true)            // the folder root is unmounted while the scan runs
	fs.errs <- errors.New("inotify: watched root removed")

	time.Sleep(50 * time.Millisecond)
	summary := make(chan map[string]interface{})
	go func() { summary <- (&folderSummaryService{model: m}).Summary("default") }()
	time.Sleep(10 * time.Millisecond)
	ccDone := make(chan struct{})
	go func() { m.ClusterConfig("DEVICE-2", []string{"default"}); close(ccDone) }()

	fmt.Println("summary:", <-summary)
	<-ccDone
	f.Stop()
	fmt.Println("done")
}
