// Project: moby/buildkit (solver/jobs.go)
// Bug: state.setEdge held the per-vertex state lock (st.mu) and, through its
//      back-pointer to the owning Solver, looked up the target vertex state
//      with st.solver.getState(), which takes the solver lock (jl.mu).
//      Job.Discard holds jl.mu and takes st.mu of every state the job was
//      attached to -> AB-BA between Solver.mu and state.mu.
// Fix: resolve the target state through the solver before taking st.mu, so
//      state.mu is never held while acquiring Solver.mu.

package b18buildkitjobs_fixed

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type digest string

type Index int

// testHookEdgeLoaded is called after setEdge has loaded the cached edge;
// tests use it to widen the race window (cache lookups hit the disk).
var testHookEdgeLoaded func()

type edge struct {
	vtx   digest
	index Index
	deps  []*edge
}

type SolverOpt struct {
	DefaultCache  string
	ResolveOpFunc func(digest) error
}

// Solver provides a shared graph of all the vertexes currently being
// processed. Every vertex that is being solved needs to be loaded into job
// first. Vertex operations are invoked and progress tracking happens through
// jobs.
type Solver struct {
	mu      sync.RWMutex
	jobs    map[string]*Job
	actives map[digest]*state
	opts    SolverOpt
}

type state struct {
	jobs     map[*Job]struct{}
	parents  map[digest]struct{}
	childVtx map[digest]struct{}

	mu      sync.Mutex
	vtx     digest
	name    string
	edges   map[Index]*edge
	solver  *Solver
	refs    int
	cacheMu sync.Mutex
}

type Job struct {
	list   *Solver
	id     string
	sessID string
	values sync.Map
}

func NewSolver(opts SolverOpt) *Solver {
	return &Solver{jobs: map[string]*Job{}, actives: map[digest]*state{}, opts: opts}
}

func (jl *Solver) NewJob(id string) (*Job, error) {
	jl.mu.Lock()
	defer jl.mu.Unlock()
	if _, ok := jl.jobs[id]; ok {
		return nil, fmt.Errorf("job ID %s exists", id)
	}
	j := &Job{list: jl, id: id}
	jl.jobs[id] = j
	return j, nil
}

// load attaches a vertex to a job, creating its shared state if needed.
func (jl *Solver) load(j *Job, vtx digest, name string) *state {
	jl.mu.Lock()
	defer jl.mu.Unlock()
	st, ok := jl.actives[vtx]
	if !ok {
		st = &state{
			jobs:     map[*Job]struct{}{},
			parents:  map[digest]struct{}{},
			childVtx: map[digest]struct{}{},
			vtx:      vtx,
			name:     name,
			edges:    map[Index]*edge{},
			solver:   jl,
		}
		jl.actives[vtx] = st
	}
	st.mu.Lock()
	st.jobs[j] = struct{}{}
	st.mu.Unlock()
	return st
}

func (jl *Solver) getState(dgst digest) (*state, bool) {
	jl.mu.RLock()
	defer jl.mu.RUnlock()
	st, ok := jl.actives[dgst]
	return st, ok
}

// setEdge merges an edge of this vertex into the edge of another (target)
// vertex that produced the same cache key.
func (s *state) setEdge(index Index, target digest, targetIndex Index) {
	// Resolve the target through the solver before taking s.mu: the lock
	// order is always Solver.mu -> state.mu.
	targetSt, ok := s.solver.getState(target)
	if !ok {
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	e, found := s.edges[index]
	if !found {
		e = &edge{vtx: s.vtx, index: index}
		s.edges[index] = e
	}
	if testHookEdgeLoaded != nil {
		testHookEdgeLoaded()
	}
	targetSt.mu.Lock()
	te, ok := targetSt.edges[targetIndex]
	targetSt.mu.Unlock()
	if ok {
		e.deps = append(e.deps, te)
		s.childVtx[target] = struct{}{}
	}
}

// Discard detaches the job from every vertex it loaded and drops vertexes
// that no other job references.
func (j *Job) Discard() error {
	j.list.mu.Lock()
	defer j.list.mu.Unlock()

	for k, st := range j.list.actives {
		st.mu.Lock()
		delete(st.jobs, j)
		if len(st.jobs) == 0 && len(st.parents) == 0 {
			delete(j.list.actives, k)
		}
		st.mu.Unlock()
	}
	delete(j.list.jobs, j.id)
	return nil
}

func TestDiscardWhileMergingEdges(t *testing.T) {
	jl := NewSolver(SolverOpt{DefaultCache: "local"})
	j1, _ := jl.NewJob("build-1")
	j2, _ := jl.NewJob("build-2")
	st := jl.load(j1, "sha256:aaaa", "RUN make")
	jl.load(j2, "sha256:bbbb", "RUN make")

	testHookEdgeLoaded = func() { time.Sleep(50 * time.Millisecond) }
	defer func() { testHookEdgeLoaded = nil }()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // scheduler merging identical edges
		defer wg.Done()
		st.setEdge(0, "sha256:bbbb", 0)
	}()
	go func() { // client disconnected
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		_ = j1.Discard()
	}()
	wg.Wait()
}
