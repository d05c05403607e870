// Project: tektoncd/pipeline (pkg/pipelinerunmetrics/metrics.go, same change in pkg/taskrunmetrics/metrics.go), v0.28 development, September 2021 (fixed by PR #4222 "Fix Concurrency issue in the metrics", issue #4223; the exact pre-fix body is approximate).
// Bug: when the metrics Recorder was made configurable it gained a mutex, and ReportRunningPipelineRuns took r.mutex around its periodic report while the helper it calls, RunningPipelineRuns, locks r.mutex again. The reporting goroutine blocks on its own lock after the first ReportingPeriod, and from then on every reconcile that records DurationAndCount blocks on the same mutex. The fix takes the lock only in the functions that call the stats recorder.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// PipelineRun is the part of v1beta1.PipelineRun the recorder looks at.
type PipelineRun struct {
	Namespace, Name, PipelineRef string
	Done                         bool
	Status                       string
	Start, Completion            time.Time
}

func (pr *PipelineRun) IsDone() bool { return pr.Done }

// PipelineRunLister mirrors listers.PipelineRunLister.
type PipelineRunLister interface {
	List() ([]*PipelineRun, error)
}

type fakeLister struct{ prs []*PipelineRun }

func (l *fakeLister) List() ([]*PipelineRun, error) { return l.prs, nil }

// Mutator stands in for an opencensus tag.Mutator.
type Mutator string

// record stands in for knative.dev/pkg/metrics.Record.
func record(tags []Mutator, measure string, v float64) {
	_ = fmt.Sprintf("%v %s=%v", tags, measure, v)
}

// Recorder holds keys for Tekton metrics.
type Recorder struct {
	mutex       sync.Mutex
	initialized bool

	insertTag func(pipeline, pipelinerun string) []Mutator

	ReportingPeriod time.Duration
}

var (
	once        sync.Once
	r           *Recorder
	recorderErr error
)

// NewRecorder lazily initializes the singleton recorder.
func NewRecorder(level string) (*Recorder, error) {
	once.Do(func() {
		r = &Recorder{initialized: true, ReportingPeriod: 30 * time.Second}
		recorderErr = viewRegister(level)
		if recorderErr != nil {
			r.initialized = false
		}
	})
	return r, recorderErr
}

func viewRegister(level string) error {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	switch level {
	case "pipelinerun":
		r.insertTag = func(p, pr string) []Mutator { return []Mutator{Mutator(p), Mutator(pr)} }
	case "pipeline":
		r.insertTag = func(p, _ string) []Mutator { return []Mutator{Mutator(p)} }
	default:
		return errors.New("invalid config for PipelinerunLevel: " + level)
	}
	return nil
}

// DurationAndCount is called by the PipelineRun reconciler when a run finishes.
func (r *Recorder) DurationAndCount(pr *PipelineRun) error {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	if !r.initialized {
		return fmt.Errorf("ignoring the metrics recording for %s, failed to initialize the metrics recorder", pr.Name)
	}
	d := pr.Completion.Sub(pr.Start)
	tags := append([]Mutator{Mutator(pr.Namespace), Mutator(pr.Status)}, r.insertTag(pr.PipelineRef, pr.Name)...)
	record(tags, "pipelinerun_duration_seconds", d.Seconds())
	record(tags, "pipelinerun_count", 1)
	return nil
}

// RunningPipelineRuns logs the number of PipelineRuns running right now.
func (r *Recorder) RunningPipelineRuns(lister PipelineRunLister) error {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	if !r.initialized {
		return errors.New("ignoring the metrics recording, failed to initialize the metrics recorder")
	}
	prs, err := lister.List()
	if err != nil {
		return fmt.Errorf("failed to list pipelineruns while generating metrics : %w", err)
	}
	running := 0
	for _, pr := range prs {
		if !pr.IsDone() {
			running++
		}
	}
	record(nil, "running_pipelineruns_count", float64(running))
	return nil
}

// ReportRunningPipelineRuns invokes RunningPipelineRuns on our configured
// PeriodSeconds until the context is cancelled.
func (r *Recorder) ReportRunningPipelineRuns(ctx context.Context, lister PipelineRunLister) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.ReportingPeriod):
			// Every 30s surface a metric for the number of running pipelines.
			// RunningPipelineRuns takes r.mutex itself.
			if err := r.RunningPipelineRuns(lister); err != nil {
				fmt.Println("Failed to log the metrics :", err)
			}
		}
	}
}

// Reconciler is the PipelineRun reconciler's use of the recorder.
type Reconciler struct {
	metrics *Recorder
}

func (c *Reconciler) ReconcileKind(pr *PipelineRun) error {
	pr.Done, pr.Status, pr.Completion = true, "success", pr.Start.Add(3*time.Second)
	return c.metrics.DurationAndCount(pr)
}

func main() {
	rec, err := NewRecorder("pipeline")
	if err != nil {
		panic(err)
	}
	rec.ReportingPeriod = 10 * time.Millisecond
	pr := &PipelineRun{Namespace: "default", Name: "build-1", PipelineRef: "build", Start: time.Now()}
	lister := &fakeLister{prs: []*PipelineRun{pr}}

	ctx, cancel := context.WithCancel(context.Background())
	go rec.ReportRunningPipelineRuns(ctx, lister)

	// The first report fires before the run completes.
	time.Sleep(50 * time.Millisecond)
	done := make(chan error)
	go func() { done <- (&Reconciler{metrics: rec}).ReconcileKind(pr) }()
	fmt.Println("reconcile:", <-done)
	cancel()
}
