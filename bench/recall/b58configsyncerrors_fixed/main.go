// Fixed version (PR #1261 applied).
// Project: GoogleContainerTools/kpt-config-sync (Config Sync, the GitOps
// reconciler for GKE/Anthos), mid-2024 development branch.
// Files: pkg/parse/updater.go (Updater.Errors, applyErrors, addApplyError,
// Update, apply, SetSyncStatus, startPeriodicSyncStatusUpdates).
// Fix: GoogleContainerTools/kpt-config-sync PR #1261 "fix: deadlock in
// Updater.Errors()" (regression from PR #1199).
//
// Updater keeps the validation, apply and watch errors under statusMux, an
// RWMutex. While Update runs, a periodic goroutine refreshes the RootSync /
// RepoSync status; SetSyncStatus calls u.Errors(), which read-locks statusMux
// and, after collecting the remediator's conflict errors, calls the helper
// u.applyErrors(), which read-locks statusMux a second time. Meanwhile the
// applier reports each failed object through the event handler that apply()
// wraps around it, and addApplyError write-locks statusMux. If that writer
// queues between the two read locks, the status goroutine waits for the
// writer and the writer waits for the status goroutine: the reconciler stops
// syncing (the deadlock was flaky, as it needs that exact interleaving). The
// fix has Errors() read u.applyErrs directly and deletes applyErrors().
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

type MultiError []error

func Append(errs MultiError, err ...error) MultiError {
	for _, e := range err {
		if e != nil {
			errs = append(errs, e)
		}
	}
	return errs
}

func (m MultiError) Error() string {
	var s []string
	for _, e := range m {
		s = append(s, e.Error())
	}
	return strings.Join(s, "; ")
}

// remediator.Interface
type Remediator interface {
	ConflictErrors() []error
	Pause()
	Resume()
}

type remediator struct {
	mu        sync.Mutex
	conflicts []error
}

func (r *remediator) ConflictErrors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	time.Sleep(100 * time.Millisecond) // walks every watched object's conflict state
	return append([]error(nil), r.conflicts...)
}
func (r *remediator) Pause()  {}
func (r *remediator) Resume() {}

// applier.Applier
type Event interface{}
type ErrorEvent struct{ Error error }

type Applier interface {
	Apply(ctx context.Context, eventHandler func(Event), objs []string) error
}

type supervisor struct{}

func (s *supervisor) Apply(ctx context.Context, eventHandler func(Event), objs []string) error {
	for _, obj := range objs {
		time.Sleep(50 * time.Millisecond) // server-side apply of one object
		eventHandler(ErrorEvent{Error: fmt.Errorf("failed to apply %s: admission webhook denied", obj)})
	}
	return nil
}

type Updater struct {
	Remediator Remediator
	Applier    Applier

	// statusMux prevents race conditions reading and writing status fields.
	statusMux      sync.RWMutex
	validationErrs MultiError
	applyErrs      MultiError
	watchErrs      MultiError

	updateMux sync.RWMutex
}

// Errors returns the latest known set of errors from the updater.
// This method is safe to call while Update is running.
func (u *Updater) Errors() MultiError {
	u.statusMux.RLock()
	defer u.statusMux.RUnlock()

	var errs MultiError
	errs = Append(errs, u.Remediator.ConflictErrors()...)
	errs = Append(errs, u.validationErrs...)
	errs = Append(errs, u.applyErrs...)
	errs = Append(errs, u.watchErrs...)
	return errs
}

func (u *Updater) addApplyError(err error) {
	u.statusMux.Lock()
	defer u.statusMux.Unlock()
	u.applyErrs = Append(u.applyErrs, err)
}

func (u *Updater) resetApplyErrors() {
	u.statusMux.Lock()
	defer u.statusMux.Unlock()
	u.applyErrs = nil
}

func (u *Updater) Update(ctx context.Context, objs []string) MultiError {
	u.updateMux.Lock()
	defer u.updateMux.Unlock()

	ctxForUpdateSyncStatus, cancel := context.WithCancel(ctx)
	doneCh := u.startPeriodicSyncStatusUpdates(ctxForUpdateSyncStatus, 10*time.Millisecond)

	u.Remediator.Pause()
	err := u.apply(ctx, objs)
	u.Remediator.Resume()

	cancel()
	<-doneCh
	return err
}

func (u *Updater) apply(ctx context.Context, objs []string) MultiError {
	var err MultiError
	wrapper := func(event Event) {
		if errEvent, ok := event.(ErrorEvent); ok {
			err = Append(err, errEvent.Error)
			u.addApplyError(errEvent.Error)
		}
	}
	u.resetApplyErrors()
	if applyErr := u.Applier.Apply(ctx, wrapper, objs); applyErr != nil {
		err = Append(err, applyErr)
	}
	return err
}

// SetSyncStatus updates `.status.sync` of the RSync object.
func (u *Updater) SetSyncStatus(ctx context.Context) error {
	errs := u.Errors()
	if len(errs) > 0 {
		return errors.New(errs.Error())
	}
	return nil
}

func (u *Updater) startPeriodicSyncStatusUpdates(ctx context.Context, period time.Duration) chan struct{} {
	doneCh := make(chan struct{})
	go func() {
		defer close(doneCh)
		updateTimer := time.NewTimer(period)
		defer updateTimer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-updateTimer.C:
				_ = u.SetSyncStatus(ctx)
				updateTimer.Reset(period)
			}
		}
	}()
	return doneCh
}

func main() {
	u := &Updater{Remediator: &remediator{}, Applier: &supervisor{}}
	errs := u.Update(context.Background(), []string{"deployment/frontend"})
	fmt.Println("sync errors:", len(errs), errs.Error())
}
