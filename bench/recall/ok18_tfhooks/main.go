// Package main models Terraform's apply walk and its UI hooks
// (internal/terraform/hook.go, the state-sync wrapper in states/sync.go):
// hooks registered by name are invoked while the state lock is held so that
// they observe the exact post-apply value. Hooks only read the arguments they
// are given, or lock the UI/progress objects, which are always locked after
// the state lock and never call back into the state.
package main

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

type resourceState struct {
	addr   string
	status string
	attrs  map[string]string
}

type postApplyHook func(addr string, newState resourceState)

type syncState struct {
	mu        sync.Mutex
	resources map[string]resourceState
	hooks     map[string]postApplyHook
}

func newSyncState() *syncState {
	return &syncState{resources: map[string]resourceState{}, hooks: map[string]postApplyHook{}}
}

func (s *syncState) RegisterHook(name string, h postApplyHook) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks[name] = h
}

func (s *syncState) SetResource(addr string, attrs map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := resourceState{addr: addr, status: "created", attrs: attrs}
	if _, ok := s.resources[addr]; ok {
		rs.status = "updated"
	}
	s.resources[addr] = rs
	for _, h := range s.hooks {
		h(addr, rs)
	}
}

func (s *syncState) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.resources)
}

// uiHook: its lock is only ever taken while the state lock may be held.
type uiHook struct {
	mu    sync.Mutex
	lines []string
}

func (u *uiHook) PostApply(addr string, rs resourceState) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lines = append(u.lines, fmt.Sprintf("%s: %s (%d attrs)", addr, rs.status, len(rs.attrs)))
}

// countHook only reads arguments and updates atomics.
type countHook struct {
	created, updated atomic.Int64
}

func (c *countHook) PostApply(_ string, rs resourceState) {
	if rs.status == "created" {
		c.created.Add(1)
	} else {
		c.updated.Add(1)
	}
}

func main() {
	st := newSyncState()
	ui := &uiHook{}
	counts := &countHook{}
	st.RegisterHook("ui", ui.PostApply)
	st.RegisterHook("count", counts.PostApply)

	resources := []string{
		"aws_vpc.main", "aws_subnet.a", "aws_subnet.b", "aws_security_group.web",
		"aws_instance.web[0]", "aws_instance.web[1]", "aws_lb.front", "aws_route53_record.www",
	}

	// terraform walks the graph with parallelism=4
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for pass := 0; pass < 2; pass++ {
		for _, addr := range resources {
			wg.Add(1)
			sem <- struct{}{}
			go func(addr string, pass int) {
				defer wg.Done()
				defer func() { <-sem }()
				st.SetResource(addr, map[string]string{"id": fmt.Sprintf("%s-%d", addr, pass)})
			}(addr, pass)
		}
		wg.Wait()
	}
	// the UI renders progress concurrently with a late refresh
	wg.Add(2)
	go func() {
		defer wg.Done()
		st.SetResource("aws_s3_bucket.logs", map[string]string{"id": "logs"})
	}()
	go func() {
		defer wg.Done()
		ui.mu.Lock()
		_ = len(ui.lines)
		ui.mu.Unlock()
	}()
	wg.Wait()

	ui.mu.Lock()
	lines := append([]string(nil), ui.lines...)
	ui.mu.Unlock()
	sort.Strings(lines)
	fmt.Printf("resources=%d ui lines=%d created=%d updated=%d\n",
		st.Len(), len(lines), counts.created.Load(), counts.updated.Load())
	if counts.created.Load() != 9 || counts.updated.Load() != 8 {
		panic("hook accounting mismatch")
	}
}
