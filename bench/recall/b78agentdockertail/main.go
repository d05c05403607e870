// Project: grafana/agent Flow (component/loki/source/docker/docker.go, runner.go, internal/dockertarget), v0.33 dev, March 2023.
// Bug: Component.Update holds c.mut (write) while manager.syncTargets makes the generic runner stop the
// tailer of a container that disappeared; the stopping docker target flushes its buffered lines into the
// component handler, but Run takes c.mut.RLock to read the fan-out receivers for every entry, so Update,
// the runner worker and Run deadlock (issue #3391, fixed by PR #3402 with a separate receiversMut).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Entry struct {
	Labels map[string]string
	Line   string
	Time   time.Time
}

type LogsReceiver chan Entry

// Target (internal/dockertarget) tails the logs of one container and forwards them to handler.
type Target struct {
	containerName string
	handler       chan<- Entry
	buffered      []string // lines demultiplexed from the docker stream, not yet sent
	cancel        context.CancelFunc
	wg            sync.WaitGroup
}

func NewTarget(name string, handler chan<- Entry, buffered []string) *Target {
	return &Target{containerName: name, handler: handler, buffered: buffered}
}

func (t *Target) StartIfNotRunning(ctx context.Context) {
	ctx, t.cancel = context.WithCancel(ctx)
	t.wg.Add(1)
	go t.process(ctx)
}

func (t *Target) process(ctx context.Context) {
	defer t.wg.Done()
	<-ctx.Done()
	// Flush what was read from the docker log stream before shutting down.
	for _, line := range t.buffered {
		t.handler <- Entry{Labels: map[string]string{"container": t.containerName}, Line: line, Time: time.Now()}
	}
}

func (t *Target) Stop() {
	t.cancel()
	t.wg.Wait()
}

// ---- pkg/runner: generic task runner ----

type Task interface {
	Hash() string
	NewWorker() Worker
}

type Worker interface {
	Run(ctx context.Context)
	Stop()
}

type Runner struct {
	ctx     context.Context
	mut     sync.Mutex
	workers map[string]Worker
}

func NewRunner(ctx context.Context) *Runner {
	return &Runner{ctx: ctx, workers: map[string]Worker{}}
}

// ApplyTasks starts workers for new tasks and stops (and waits for) workers
// whose task is gone.
func (r *Runner) ApplyTasks(ctx context.Context, tasks []Task) error {
	r.mut.Lock()
	defer r.mut.Unlock()
	wanted := map[string]Task{}
	for _, t := range tasks {
		wanted[t.Hash()] = t
	}
	for h, w := range r.workers {
		if _, ok := wanted[h]; !ok {
			w.Stop()
			delete(r.workers, h)
		}
	}
	for h, t := range wanted {
		if _, ok := r.workers[h]; !ok {
			w := t.NewWorker()
			r.workers[h] = w
			w.Run(r.ctx)
		}
	}
	return nil
}

// ---- component/loki/source/docker ----

type tailerTask struct {
	handler   chan<- Entry
	container string
}

func (tt *tailerTask) Hash() string { return tt.container }
func (tt *tailerTask) NewWorker() Worker {
	return &tailer{target: NewTarget(tt.container, tt.handler, []string{"GET /healthz 200", "shutting down"})}
}

type tailer struct{ target *Target }

func (t *tailer) Run(ctx context.Context) { t.target.StartIfNotRunning(ctx) }
func (t *tailer) Stop()                   { t.target.Stop() }

type manager struct {
	runner *Runner
	opts   *options
}

type options struct{ handler chan<- Entry }

func (m *manager) syncTargets(ctx context.Context, containers []string) error {
	tasks := make([]Task, 0, len(containers))
	for _, c := range containers {
		tasks = append(tasks, &tailerTask{handler: m.opts.handler, container: c})
	}
	return m.runner.ApplyTasks(ctx, tasks)
}

type Arguments struct {
	Targets   []string // discovery.docker targets (container names)
	ForwardTo []LogsReceiver
}

type Component struct {
	mut       sync.RWMutex
	args      Arguments
	manager   *manager
	handler   LogsReceiver
	receivers []LogsReceiver
}

func (c *Component) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case entry := <-c.handler:
			c.mut.RLock()
			for _, receiver := range c.receivers {
				receiver <- entry
			}
			c.mut.RUnlock()
		}
	}
}

func (c *Component) Update(args Arguments) error {
	c.mut.Lock()
	defer c.mut.Unlock()
	c.receivers = args.ForwardTo

	if c.manager == nil {
		c.manager = &manager{runner: NewRunner(context.Background()), opts: &options{handler: c.handler}}
	}
	if err := c.manager.syncTargets(context.Background(), args.Targets); err != nil {
		return err
	}
	c.args = args
	return nil
}

func main() {
	write := make(LogsReceiver, 100)
	c := &Component{handler: make(LogsReceiver)}
	if err := c.Update(Arguments{Targets: []string{"nginx", "redis"}, ForwardTo: []LogsReceiver{write}}); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)

	// The redis container is removed: discovery.docker sends a smaller target list.
	if err := c.Update(Arguments{Targets: []string{"nginx"}, ForwardTo: []LogsReceiver{write}}); err != nil {
		panic(err)
	}
	fmt.Println("updated; forwarded entries:", len(write))
}
