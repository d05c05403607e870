package locks

import (
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// engine is the state of one Summarize call.
type engine struct {
	p     *program.Package
	ctx   *roots.Contexts
	objs  *objects.Index // which object a value is (ctx.Objects)
	infos map[*ssa.Function]*funcInfo
	// imported caches summaries of other packages' functions (nil: none).
	imported  map[*ssa.Function]*funcInfo
	classVars map[string]*types.Var
	// subVars: the value field a Hold.Sub names ("Store.mu.RWMutex", a
	// wrapper mutex held in Store), for the one-object rule.
	subVars map[string]*types.Var
	// treeSteps: same-class takes along a parent or children field, by
	// class (tree.go).
	treeSteps map[string][]treeStep
	// selfBound: functions stored into a field of the object they
	// capture (selfbound.go).
	selfBound map[*ssa.Function]selfBinding
	// gates, callSites, entryCache, valueUsed: gate locks (gates.go).
	gates      map[edgeKey][]gateWitness
	callSites  map[*ssa.Function][]gateWitness
	entryCache map[*ssa.Function][]string
	valueUsed  map[*ssa.Function]bool
	// tests lists what each test function runs and testStarts caches
	// testRunOf; byName indexes functions by funcName (teststart.go).
	tests      []*testRun
	testStarts map[*ssa.Function]*testRun
	testSteps  map[*ssa.Function]*testStep // stepOf's cache
	// condReadCache: what each callee's branches test (condreads.go);
	// panicCache: where each callee panics (panicleak.go, calledPanic).
	panicCache    map[*ssa.Function]token.Pos
	condReadCache map[*ssa.Function]map[types.Object]bool
	byName        map[string]*ssa.Function
	// closureEntry is the caller's state where a synchronously used
	// closure is created: the closure body is checked under it.
	closureEntry map[*ssa.Function]*State
	// escaping: closures with a use other than a call in place or as an
	// argument: they start with nothing held.
	escaping map[*ssa.Function]bool
	edges    []edge
	edgeAt   map[edgeKey]int // index in edges of each key's witness
	// exclusive, importedEnds: for each edge key, whether some witness
	// of the package, of the facts, holds From or takes To exclusively
	// (readsides.go).
	exclusive, importedEnds map[edgeKey]edgeEnds
	// testEdges: each test function's best witness of an edge seen in
	// tests (edges keeps one witness per key; whether a test's cycle can
	// deadlock depends on the test).
	testEdges map[testEdgeKey]edge
	leaves    map[string]bool // privateLeaves, left out of the facts
	locals    map[string]bool // classes of local variables (localclass.go)
	findings  []diag.Finding
	relocks   map[string]int // findRelock's first finding per take, by index
	// relockHolds: the re-lock finding of each hold, and the blocking-held
	// one (relockgroup.go, blocking.go).
	relockHolds map[relockHoldKey]*relockHold
	impls       map[implKey][]*ssa.Function
	convs       []conversion    // MakeInterface of named types (scanConversions)
	ifaceConvs  [][2]types.Type // interface-to-interface conversions and assertions
	convCache   map[types.Type]map[*types.Named]bool
	// dispatches: interface calls under locks, for importers (dispatch.go).
	dispatches map[*types.TypeName]map[dispatchKey]heldDispatch
	// dispatchSites caches reachableDispatches.
	dispatchSites map[*ssa.Function][]dispatchSite
	// dispatchRelocks: the double locks dispatchRelock reported.
	dispatchRelocks map[relockKey]bool
	guards          map[*types.Var]*guard
	// guardUses: accesses of annotated structs' fields (inferguard.go).
	guardUses map[*types.Var]*guardUse
	// tryWrappers caches tryWrapper (trywrapper.go).
	tryWrappers map[*ssa.Function]tryLockOf
	// condKeys caches condKey: a walk asks for the same branch values at
	// every round, and the key spells out the value's type.
	condKeys map[valueIn]string
	// nilTests caches nilEdges: every walk of a function (rounds,
	// specializations) asks again at each Lock and func-value call.
	nilTests map[valueIn]map[[2]int]bool
	// onceGuards caches onceSkips (onceguard.go).
	onceGuards map[*ssa.Function]map[[2]int]bool
	// pureWrappers caches pureWrapper by type (wrapper.go).
	pureWrappers map[*types.Named]bool
	// recovering maps each function a deferred recover of the package
	// covers to that recover (panicleak.go); nil until first needed.
	recovering map[*ssa.Function]recoverer
	// annotatedLocks caches guardsAnnotated by class.
	annotatedLocks     map[string]bool
	chanCaps           map[string]bool            // channel identity -> every make of it is buffered
	chanHomes          map[string]string          // local channel identity -> the field or var it is kept in
	wrappers           map[*ssa.Function]*wrapper // formatting wrappers, memo of formatWrapper
	argBranches        map[posIn]bool             // memo of branchesOnArgs
	tableUnlockClasses map[string]bool            // locktable.go
	aliases            map[*types.Named][]aliasPair
	cur                *ssa.Function    // the function being walked, for fallback positions
	forceLines         map[string]bool  // "file:line" of each +checklocksforce (force.go)
	guardFound         map[guardKey]int // guard findings by access and lock (guardFinding)
	// specials: summaries specialized by constant arguments (specialize.go).
	specials     map[specKey]*funcInfo
	specializing map[*ssa.Function]bool
	tested       map[*ssa.Function][]input
	writers      map[string]string // writerOf's answers, by class
	// goStmts, queued: the go statements by position and each root
	// function's calls of queued func values (boundroots.go), built once.
	goStmts map[token.Pos]*ssa.Go
	queued  map[*ssa.Function][]queuedCall
}

// funcInfo is the summary of one function.
type funcInfo struct {
	takes    []take
	acquires []Hold // held on every return, taken inside (paths relative to the function)
	releases []Hold // the caller's locks it unlocks
	// partial: the classes of releases that some return does not follow
	// (`if txn.write { wmu.Unlock() } else { rmu.RUnlock() }`): the lock
	// is not known held whenever the function runs (gates.go).
	partial []string
	// unlocks: the caller's locks it unlocks at some point, even if it
	// takes them again (a semaphore's goroutine: h.Unlock(); h.Lock()).
	unlocks []Hold
	tries   []tryAcquire // held on return exactly when it reports success
	chans   []chanOp
	blocks  []blockOp // operations that block in it or its callees (condwait.go)
	// paramCalls: calls of func values the function was given, for its
	// callers to resolve (paramcall.go).
	paramCalls []paramCall
	// releaseFuncs: locks it returns held with the function that
	// releases them (releasefunc.go).
	releaseFuncs []releaseFunc
	// resultLocks: locks it returns held inside a result, inferred
	// (resultheld.go).
	resultLocks []resultLock
}

// take is one lock class acquired inside a function.
type take struct {
	Path         string // path relative to the function, "" when not portable
	Class, Name  string
	Shared       bool
	Pos          token.Pos  // acquisition or call site in this package
	At           string     // "file.go:12" of the innermost acquisition
	leaf         token.Pos  // the innermost acquisition, in this package only
	Via          *callChain // functions called down to the acquisition
	afterRelease bool       // taken after releasing a caller's lock
	released     []string   // which: their paths (State.outerRel)
	// cond counts the conditional steps down to the acquisition: the
	// acquisition and each call on the way that does not dominate every
	// return of its function. 0: taken on every path to the return.
	cond int
	// own is the part of cond that is the function's own step (its
	// branch around the acquisition or the call leading to it).
	own int
	// branch and ownBranch are cond and own without the steps that are
	// a loop's iterations (iterations.go): a double lock needs branch 0.
	branch, ownBranch int
	// loose: reached through a call that may run another function (an
	// interface or func-field candidate): not certain even at cond 0.
	loose bool
	// several: reached through a call with several candidates, this
	// being one of them (loose too); a single func a field is ever set
	// to is loose but not several.
	several bool
	// test: the acquisition is in a _test.go file (edge.test for every
	// caller, production ones calling a test's fake included).
	test bool
	// Sub is the value field holding the lock's struct (see Hold.Sub).
	Sub string
	// elemOf: Hold.elemOf, in this function's paths.
	elemOf string
	// fresh: the lock of an object the function (or a callee) created and
	// had not published at the acquisition (see Hold.Fresh).
	fresh bool
	// when: the one branch condition that decides the take (branch 1),
	// in this function's paths; nil when none does (when.go).
	when *cond
	// leafSure: the function that makes the acquisition makes it on every
	// path to its return, and every call down to it is exact (no
	// interface or func-value candidate): the conditional steps, if any,
	// are the callers' choices to call it (calls.go, relockSomePaths).
	leafSure bool
	// deep: reached through more than maxVia calls, on some paths only,
	// its leaf locking on every path and every call down to it exact:
	// the callers' choice to call it, no guess at any depth for a double
	// lock (hugo's shortcode reaching WordCount's sync.Once nine calls
	// down), but no order edge (a debug path's flag, mustchain's Index).
	deep bool
	// dynBranch: some conditional step is inside a function reached
	// through a func value or interface call that branches on what it
	// was passed (an event's type) rather than on its own state.
	dynBranch bool
	// nilPath: the take happens only where this value of the function's
	// ("p1", or a field of a parameter, "p1.Txn") is nil (`if tx == nil {
	// db.Update(fn) }`); "" otherwise (nilarg.go).
	nilPath string
	// writerAlong: a read lock whose function write-locks the same lock
	// on some path too (Hold.writerAlong), however deep that is.
	writerAlong bool
	// failed names a failure when some path down to the take branches
	// only where calls fail (failbranch.go): "" when none does; failedOn
	// is the path of the object whose state fails, "" when unknown.
	failed, failedOn string
}

// Bounds on what a take propagates through calls (a may-acquire several
// conditional steps or many calls away is a debug path or a chain no
// reader can check): takes beyond them give callers no edges. A certain
// take (every step unconditional, every call exact) is no guess however
// deep: it goes up to maxMustVia calls, a bound against pathological call
// graphs only.
const (
	maxCond = 2
	maxVia  = 8
	// maxCandidates: a func value that may hold more functions than this
	// is a dispatch table (nats-server's subscription callbacks, 80 of
	// them, called by its test transport): which one runs is not known,
	// and an edge from each is a guess about all of them. It resolves to
	// nothing, as an unknown func value does.
	maxCandidates = 24
	maxMustVia    = 32
)

// certain reports whether the take happens on every path of every call
// down to it.
func (t take) certain() bool { return t.cond == 0 && !t.loose }

// eachTurn reports whether t is certain but for loop iterations: no
// branch decides it, a loop runs it on each turn (iterations.go). An
// edge so taken is evidence for a long cycle as a certain one is: a loop
// over the objects locks the first it meets.
func (t take) eachTurn() bool { return t.branch == 0 && !t.loose }

// viaBound is the longest call chain a take may be reached through.
func (t take) viaBound() int {
	if t.certain() {
		return maxMustVia
	}
	return maxVia
}

// maxTakes bounds a summary: enough for every distinct lock of real code.
const maxTakes = 64

// callChain is the calls from a function down to an acquisition, first
// call first. A caller's take extends its callee's chain by one link
// instead of copying it: summaries of deep call graphs share their chains.
type callChain struct {
	name string
	next *callChain
	n    int // links from here to the end
}

func (c *callChain) push(name string) *callChain {
	return &callChain{name: name, next: c, n: c.len() + 1}
}

func (c *callChain) len() int {
	if c == nil {
		return 0
	}
	return c.n
}

func (c *callChain) names() []string {
	out := make([]string, 0, c.len())
	for ; c != nil; c = c.next {
		out = append(out, c.name)
	}
	return out
}

// last is the innermost call of the chain, the function that acquires.
func (c *callChain) last() string {
	for ; c != nil && c.next != nil; c = c.next {
	}
	if c == nil {
		return ""
	}
	return c.name
}

// text renders the chain for messages and facts: "f -> g -> h".
func (c *callChain) text() string { return strings.Join(c.names(), " -> ") }

// chainOf builds a chain from names, first call first.
func chainOf(names []string) *callChain {
	var c *callChain
	for i := len(names) - 1; i >= 0; i-- {
		c = c.push(names[i])
	}
	return c
}

func (f *funcInfo) resetBody() { *f = funcInfo{} }

func (f *funcInfo) addTake(t take) {
	for i, o := range f.takes {
		if o.Path == t.Path && o.Class == t.Class && o.Shared == t.Shared && o.afterRelease == t.afterRelease && o.Sub == t.Sub {
			// Keep a production witness, then one within maxVia calls,
			// then the most certain, then the shortest.
			certain := o.deep && !t.deep || o.deep == t.deep && (t.cond < o.cond || t.cond == o.cond && (o.loose && !t.loose || o.loose == t.loose && t.Via.len() < o.Via.len()))
			fresh := o.fresh && t.fresh // fresh only if fresh at every take
			branch := min(o.branch, t.branch)
			failed := o
			if o.failed == "" {
				failed = t
			}
			if o.test && !t.test || o.test == t.test && certain {
				f.takes[i] = t
			}
			f.takes[i].fresh = fresh
			f.takes[i].branch = branch
			f.takes[i].failed, f.takes[i].failedOn = failed.failed, failed.failedOn
			if o.when == nil || t.when == nil || !o.when.same(*t.when) {
				f.takes[i].when = nil
			}
			if o.nilPath != t.nilPath {
				f.takes[i].nilPath = "" // taken elsewhere too
			}
			return
		}
	}
	if len(f.takes) < maxTakes {
		f.takes = append(f.takes, t)
	}
}

func (f *funcInfo) addUnlock(h Hold)  { addPortable(&f.unlocks, h) }
func (f *funcInfo) addRelease(h Hold) { addPortable(&f.releases, h) }

// addPortable adds a caller's lock, once per path, as a definite hold.
func addPortable(list *[]Hold, h Hold) {
	if !portable(h.Path) || slices.ContainsFunc(*list, func(o Hold) bool { return o.Path == h.Path }) {
		return
	}
	h.Maybe, h.Loop = false, false
	*list = append(*list, h)
}

// summaryOf returns fn's summary: computed for the package's functions,
// from facts for others, nil when unknown.
func (e *engine) summaryOf(fn *ssa.Function) *funcInfo {
	if fn == nil {
		return nil
	}
	fn = e.canonical(fn)
	if info, ok := e.infos[fn]; ok {
		return info
	}
	return e.importedSummary(fn)
}

// find records a finding.
func (e *engine) find(pos token.Pos, rule, msg string, chain ...diag.Hop) {
	if e.forced(pos) {
		return // a +checklocksforce line
	}
	if rule == "double-lock" && e.foldIntoExcludes(pos, chain) {
		return
	}
	fallback := token.NoPos
	if e.cur != nil {
		fallback = e.cur.Pos()
	}
	e.findings = append(e.findings, diag.Finding{Pos: pos, Fallback: fallback, Rule: rule, Message: msg, Chain: chain})
}

// findAlso records a finding that other positions (a cycle's other
// witnesses) also name: an ignore at any of them silences it.
func (e *engine) findAlso(pos token.Pos, rule, msg string, also []token.Pos, chain ...diag.Hop) {
	n := len(e.findings)
	e.find(pos, rule, msg, chain...)
	if len(e.findings) > n { // not dropped on a +checklocksforce line
		e.findings[len(e.findings)-1].Also = also
	}
}

// foldIntoExcludes makes a self-deadlock at a call that already broke the
// callee's excludes one finding: the excludes one, with the first
// acquisition as related information.
func (e *engine) foldIntoExcludes(pos token.Pos, chain []diag.Hop) bool {
	for i := len(e.findings) - 1; i >= 0 && e.findings[i].Pos == pos; i-- {
		if e.findings[i].Rule == "excludes" {
			e.findings[i].Chain = append(e.findings[i].Chain, chain...)
			return true
		}
	}
	return false
}

// at renders a position as "file.go:12".
func (e *engine) at(pos token.Pos) string {
	if !pos.IsValid() {
		return "?"
	}
	p := e.p.Pass.Fset.Position(pos)
	return filepath.Base(p.Filename) + ":" + strconv.Itoa(p.Line)
}

func (e *engine) funcName(fn *ssa.Function) string { return program.FuncName(fn, e.p.Pass.Pkg) }

// foundAt reports whether a finding is already made at pos.
func (e *engine) foundAt(pos token.Pos) bool {
	return slices.ContainsFunc(e.findings, func(f diag.Finding) bool { return f.Pos == pos })
}

// Findings returns the package's lock findings in position order.
func (s *Summary) Findings() []diag.Finding {
	out := append([]diag.Finding(nil), s.findings...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Pos != out[j].Pos {
			return out[i].Pos < out[j].Pos
		}
		return out[i].Message < out[j].Message
	})
	return out
}
