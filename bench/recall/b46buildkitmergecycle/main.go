// Project: moby/buildkit master between v0.12 and v0.13 (after PR #4347
// "solver: fix printing progress messages after merged edges", which dagger
// vendored as ca71a446).
// Files/functions: solver/scheduler.go (scheduler.dispatch, scheduler.mergeTo,
// edgeFactory), solver/jobs.go (Solver.setEdge, state.setEdge),
// solver/index.go (edgeIndex.LoadOrStore), util/progress/multiwriter.go
// (MultiWriter.Add, WriteRawProgress, writeRawProgress).
// Report: comment on moby/buildkit#4347 and dagger/dagger#6374 "Update
// buildkit past ca71a44" (engine locks up in MultiWriter.writeRawProgress);
// fixed by moby/buildkit#4559 "scheduler: always edge merge in one direction".
//
// When two edges compute the same cache key, the scheduler merges the later
// one into the edge already stored in the index and calls
// Solver.setEdge(src, dest). Since #4347 setEdge also hooks the source
// vertex's progress into the target: targetState.mpw.Add(srcState.mpw).
// With two vertexes A and B that each have two edges, the scheduler could
// merge A1 into B1 (B's MultiWriter now writes to A's) and later B2 into A2
// (A's MultiWriter gets B's as a writer). MultiWriter.Add holds A's mu and
// replays A's past progress into B's writer; B's writeRawProgress holds B's
// mu and forwards the item to its writers, which include A's MultiWriter,
// whose writeRawProgress locks A's mu again on the same goroutine. The
// solver goroutine blocks on itself and the whole build hangs. The fix
// records every state a vertex was merged into and makes the scheduler
// merge in the existing direction (hasOwner swaps dest and src), so the
// MultiWriters never form a cycle.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Progress struct {
	ID        string
	Timestamp time.Time
	Sys       interface{}
}

type rawProgressWriter interface {
	WriteRawProgress(*Progress) error
}

type MultiWriter struct {
	mu      sync.Mutex
	items   []*Progress
	writers map[rawProgressWriter]struct{}
}

func (ps *MultiWriter) Add(rw rawProgressWriter) {
	ps.mu.Lock()
	plist := make([]*Progress, 0, len(ps.items))
	plist = append(plist, ps.items...)
	for _, p := range plist {
		rw.WriteRawProgress(p)
	}
	ps.writers[rw] = struct{}{}
	ps.mu.Unlock()
}

func (ps *MultiWriter) Write(id string, v interface{}) error {
	return ps.WriteRawProgress(&Progress{ID: id, Timestamp: time.Now(), Sys: v})
}
func (ps *MultiWriter) WriteRawProgress(p *Progress) error { return ps.writeRawProgress(p) }

func (ps *MultiWriter) writeRawProgress(p *Progress) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.items = append(ps.items, p)
	for w := range ps.writers {
		if err := w.WriteRawProgress(p); err != nil {
			return err
		}
	}
	return nil
}

type Edge struct {
	Index  int
	Vertex string
}

type edge struct {
	edge     Edge
	cacheKey string
	owner    *edge
}

type state struct {
	mu    sync.Mutex
	vtx   string
	mpw   *MultiWriter
	allPw map[*MultiWriter]struct{}
	edges map[int]*edge
}

func (s *state) setEdge(index int, targetEdge *edge, targetState *state) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.edges[index] = targetEdge
	if targetState != nil {
		if _, ok := targetState.allPw[s.mpw]; !ok {
			targetState.mpw.Add(s.mpw)
			targetState.allPw[s.mpw] = struct{}{}
		}
	}
}

type Solver struct {
	mu      sync.RWMutex
	actives map[string]*state
}

func (jl *Solver) setEdge(e Edge, targetEdge *edge) {
	jl.mu.RLock()
	defer jl.mu.RUnlock()
	st, ok := jl.actives[e.Vertex]
	targetSt, ok2 := jl.actives[targetEdge.edge.Vertex]
	if !ok || !ok2 {
		return
	}
	st.setEdge(e.Index, targetEdge, targetSt)
}

type edgeFactory interface {
	setEdge(Edge, *edge)
}

type edgeIndex struct {
	mu    sync.Mutex
	items map[string]*edge
}

func (ei *edgeIndex) LoadOrStore(k string, e *edge) *edge {
	ei.mu.Lock()
	defer ei.mu.Unlock()
	if old, ok := ei.items[k]; ok {
		return old
	}
	ei.items[k] = e
	return nil
}

type scheduler struct {
	ef    edgeFactory
	index *edgeIndex
}

func (s *scheduler) mergeTo(target, src *edge) bool {
	src.owner = target
	return true
}

// dispatch is run when an edge has computed a new cache key.
func (s *scheduler) dispatch(e *edge) {
	if origEdge := s.index.LoadOrStore(e.cacheKey, e); origEdge != nil {
		dest, src := origEdge, e
		fmt.Printf("merging edge %s[%d] to %s[%d]\n", src.edge.Vertex, src.edge.Index, dest.edge.Vertex, dest.edge.Index)
		if s.mergeTo(dest, src) {
			s.ef.setEdge(src.edge, dest)
		}
	}
}

func main() {
	jl := &Solver{actives: map[string]*state{}}
	for _, v := range []string{"A", "B"} {
		mpw := &MultiWriter{writers: map[rawProgressWriter]struct{}{}}
		jl.actives[v] = &state{vtx: v, mpw: mpw, allPw: map[*MultiWriter]struct{}{}, edges: map[int]*edge{}}
	}
	jl.actives["A"].mpw.Write("A", "resolve image config for docker.io/library/golang:1.21")
	jl.actives["B"].mpw.Write("B", "resolve image config for docker.io/library/golang:1.21")

	s := &scheduler{ef: jl, index: &edgeIndex{items: map[string]*edge{}}}
	e := func(vtx string, idx int, key string) *edge {
		return &edge{edge: Edge{Index: idx, Vertex: vtx}, cacheKey: key}
	}
	s.dispatch(e("B", 0, "sha256:k1")) // B1 computes k1 first
	s.dispatch(e("A", 1, "sha256:k2")) // A2 computes k2 first
	s.dispatch(e("A", 0, "sha256:k1")) // A1 is merged into B1
	s.dispatch(e("B", 1, "sha256:k2")) // B2 is merged into A2
	fmt.Println("build finished")
}
