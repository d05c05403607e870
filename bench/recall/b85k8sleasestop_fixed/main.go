// Project: kubernetes (staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go with the kube-apiserver identity lease post-start and pre-shutdown hooks), v1.35-v1.36, 2026 (fixed by PR #140241; file and hook names approximate).
// Bug: the lease controller's sync holds reconcilingLock while backoffEnsureLease retries creating the lease until its context is cancelled, and the kube-apiserver identity lease can never be created when the hostname is longer than 63 bytes. On SIGTERM the pre-shutdown hook calls Stop, which takes reconcilingLock to delete the lease, but the context that would end the retry loop is only cancelled after the pre-shutdown hooks return, so the apiserver never shuts down. The fix adds a stop channel that Stop closes before taking the lock and that ends the backoff wait.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

var errNotFound = errors.New("not found")

type Lease struct {
	Name, Namespace, HolderIdentity string
	Labels                          map[string]string
	RenewTime                       time.Time
}

type LeaseInterface interface {
	Get(ctx context.Context, name string) (*Lease, error)
	Create(ctx context.Context, lease *Lease) (*Lease, error)
	Update(ctx context.Context, lease *Lease) (*Lease, error)
	Delete(ctx context.Context, name string) error
}

// leases stands in for the coordination.k8s.io/v1 Lease REST storage.
type leases struct {
	mu     sync.Mutex
	stored map[string]*Lease
}

func (l *leases) Get(_ context.Context, name string) (*Lease, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if le, ok := l.stored[name]; ok {
		return le, nil
	}
	return nil, errNotFound
}
func (l *leases) Create(_ context.Context, le *Lease) (*Lease, error) {
	for k, v := range le.Labels {
		if len(v) > 63 {
			return nil, fmt.Errorf("Lease %q is invalid: metadata.labels[%s]: must be no more than 63 characters", le.Name, k)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stored[le.Name] = le
	return le, nil
}
func (l *leases) Update(ctx context.Context, le *Lease) (*Lease, error) { return l.Create(ctx, le) }
func (l *leases) Delete(_ context.Context, name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.stored, name)
	return nil
}

const maxBackoff = 7 * time.Second

type ProcessLeaseFunc func(*Lease) error

type controller struct {
	leaseClient             LeaseInterface
	holderIdentity          string
	leaseName               string
	leaseNamespace          string
	renewInterval           time.Duration
	newLeasePostProcessFunc ProcessLeaseFunc

	// reconcilingLock serializes sync and Stop, so that a lease deleted by
	// Stop is not recreated by a concurrent sync.
	reconcilingLock sync.Mutex
	latestLease     *Lease
	stopped         bool

	// stopCh is closed by Stop before it takes reconcilingLock.
	stopCh   chan struct{}
	stopOnce sync.Once
}

// Run runs the controller until ctx is done.
func (c *controller) Run(ctx context.Context) {
	for ctx.Err() == nil {
		c.sync(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(c.renewInterval):
		}
	}
}

func (c *controller) sync(ctx context.Context) {
	c.reconcilingLock.Lock()
	defer c.reconcilingLock.Unlock()
	if c.stopped {
		return
	}
	if c.latestLease != nil {
		c.latestLease.RenewTime = time.Now()
		if _, err := c.leaseClient.Update(ctx, c.latestLease); err == nil {
			return
		}
	}
	lease, _ := c.backoffEnsureLease(ctx)
	c.latestLease = lease
}

// backoffEnsureLease attempts to create the lease if it does not exist, and
// uses exponentially increasing waits to prevent overloading the API server.
func (c *controller) backoffEnsureLease(ctx context.Context) (*Lease, bool) {
	sleep := 100 * time.Millisecond
	for {
		lease, created, err := c.ensureLease(ctx)
		if err == nil {
			return lease, created
		}
		sleep = min(2*sleep, maxBackoff)
		// backoff wait with early return if the context gets canceled
		select {
		case <-ctx.Done():
			return nil, false
		case <-c.stopCh:
			return nil, false
		case <-time.After(sleep):
		}
	}
}

func (c *controller) ensureLease(ctx context.Context) (*Lease, bool, error) {
	lease, err := c.leaseClient.Get(ctx, c.leaseName)
	if errors.Is(err, errNotFound) {
		lease = &Lease{Name: c.leaseName, Namespace: c.leaseNamespace, HolderIdentity: c.holderIdentity, RenewTime: time.Now()}
		if c.newLeasePostProcessFunc != nil {
			if err := c.newLeasePostProcessFunc(lease); err != nil {
				return nil, false, err
			}
		}
		created, err := c.leaseClient.Create(ctx, lease)
		if err != nil {
			return nil, false, err
		}
		return created, true, nil
	}
	return lease, false, err
}

// Stop deletes the lease so other apiservers stop counting this one.
func (c *controller) Stop(ctx context.Context) {
	c.stopOnce.Do(func() { close(c.stopCh) })
	c.reconcilingLock.Lock()
	defer c.reconcilingLock.Unlock()
	c.stopped = true
	_ = c.leaseClient.Delete(ctx, c.leaseName)
}

// GenericAPIServer runs post-start and pre-shutdown hooks.
type GenericAPIServer struct {
	postStartHooks   map[string]func(ctx context.Context) error
	preShutdownHooks map[string]func() error
}

func (s *GenericAPIServer) Run(stopCh <-chan struct{}) {
	hookCtx, cancel := context.WithCancel(context.Background())
	for _, h := range s.postStartHooks {
		_ = h(hookCtx)
	}
	<-stopCh
	for _, h := range s.preShutdownHooks {
		_ = h()
	}
	// Only now are the post-start hooks' goroutines told to stop.
	cancel()
}

func main() {
	hostname := "ip-10-20-30-40.control-plane-pool-a.us-east-1.compute.internal.example.corp"
	c := &controller{
		leaseClient: &leases{stored: map[string]*Lease{}}, holderIdentity: "apiserver-" + hostname[:8],
		leaseName: "apiserver-7qf2k", leaseNamespace: "kube-system", renewInterval: 10 * time.Second, stopCh: make(chan struct{}),
		newLeasePostProcessFunc: func(l *Lease) error {
			l.Labels = map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver", "kubernetes.io/hostname": strings.ToLower(hostname)}
			return nil
		},
	}
	s := &GenericAPIServer{
		postStartHooks: map[string]func(ctx context.Context) error{
			"start-kube-apiserver-identity-lease-controller": func(ctx context.Context) error { go c.Run(ctx); return nil },
		},
		preShutdownHooks: map[string]func() error{
			"stop-kube-apiserver-identity-lease-controller": func() error { c.Stop(context.Background()); return nil },
		},
	}
	stopCh := make(chan struct{})
	done := make(chan struct{})
	go func() { s.Run(stopCh); close(done) }()
	time.Sleep(300 * time.Millisecond)
	close(stopCh) // SIGTERM
	<-done
	fmt.Println("kube-apiserver shut down")
}
