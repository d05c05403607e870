package directive

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const attachSource = `package p

import (
	"sync"

	"example.com/locks"
)

//confined:entry poll
func (c *Conn) run() {}

//confined:control poll
func (c *Conn) handle() {}

//confined:callback
func onRevoked() {}

//confined:any
func Stats() {}

//confined:spawns fn
func Go(name string, fn func()) {}

//confined:drain poll
//confined:commit poll
func (c *Conn) flush() {}

//confined:control poll
//confined:alias inner.mu=mu
type Conn struct {
	mu    sync.Mutex
	rw    sync.RWMutex
	inner *Inner
	Embeds

	//confined:guardedby mu
	count   int
	pending int // +checklocks:mu
	//confined:guardedby rw
	//confined:atomic
	hits int64
	// +checkatomic
	flag int32
	//confined:before rw
	order sync.Mutex
	//confined:guardedby Mutex
	promoted int
	//confined:guardedby inner.mu
	viaPointer int
	//confined:guardedby locks.Mu
	external int
	//confined:guardedby global
	byGlobal int
	//confined:guardedby shared.Mu
	byGlobalField int
}

type Inner struct{ mu *sync.Mutex }

type Embeds struct {
	sync.Mutex
	//confined:guardedby Mutex
	n int
}

var global sync.Mutex

var shared locks.Shared

//confined:guardedby global
var guarded int

//confined:control poll
var pollState, otherState int

//confined:requires mu
func (c *Conn) locked() {}

// +checklocks:c.mu
func (c *Conn) lockedCL() {}

//confined:requires_shared p.rw
func readP(p *Conn) {}

// +checklocksread:rw
func (c *Conn) readRW() {}

//confined:acquires inner.mu
func (c *Conn) lockInner() {}

// +checklocksacquire:ret.mu
func newLocked() (ret *Conn) { return nil }

//confined:excludes global
//confined:acquires global
func lockGlobal() {}

//confined:releases mu
//confined:requires mu
func (c *Conn) unlock() {}

//confined:requires mu
func lockParam(mu *sync.Mutex) {}

// +checklocksforce
func forced() {}
`

func TestCollectAttach(t *testing.T) {
	c := collectSource(t, attachSource, nil)
	c.wantProblems(t)
	tests := map[string][]string{
		"Conn.run":            {"entry poll"},
		"Conn.handle":         {"control poll"},
		"onRevoked":           {"callback"},
		"Stats":               {"any"},
		"Go":                  {"spawns"},
		"Conn.flush":          {"drain poll", "commit poll"},
		"Conn":                {"control poll", "alias inner.mu=mu"},
		"Conn.count":          {"guardedby mu"},
		"Conn.pending":        {"guardedby mu"},
		"Conn.hits":           {"guardedby rw", "atomic"},
		"Conn.flag":           {"atomic"},
		"Conn.order":          {"before rw"},
		"Conn.promoted":       {"guardedby Mutex"},
		"Conn.viaPointer":     {"guardedby inner.mu"},
		"Conn.external":       {"guardedby locks.Mu"},
		"Conn.byGlobal":       {"guardedby global"},
		"Conn.byGlobalField":  {"guardedby shared.Mu"},
		"Embeds.n":            {"guardedby Mutex"},
		"guarded":             {"guardedby global"},
		"pollState":           {"control poll"},
		"otherState":          {"control poll"},
		"Conn.locked":         {"requires mu"},
		"Conn.lockedCL":       {"requires c.mu"},
		"readP":               {"requires_shared p.rw"},
		"Conn.readRW":         {"requires_shared rw"},
		"Conn.lockInner":      {"acquires inner.mu"},
		"newLocked":           {"acquires ret.mu"},
		"lockGlobal":          {"excludes global", "acquires global"},
		"Conn.unlock":         {"releases mu", "requires mu"},
		"lockParam":           {"requires mu"},
		"forced":              {"force"},
		"Conn.mu":             nil,
		"Inner":               nil,
		"Conn.Embeds":         nil,
		"Conn.Embeds.Mutex":   nil,
		"Conn.inner":          nil,
		"Conn.rw":             nil,
		"Conn.count.notthere": nil,
	}
	for name, want := range tests {
		if name == "Conn.Embeds.Mutex" || name == "Conn.count.notthere" {
			continue // paths the lookup helper does not take
		}
		if got := c.verbs(t, name); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if got, want := c.set.Roles, []string{"poll"}; !slices.Equal(got, want) {
		t.Errorf("Roles = %q, want %q", got, want)
	}
	if d, ok := c.set.Find(c.lookup(t, "Go"), Spawns); !ok || d.Param != 1 {
		t.Errorf("spawns fn: Param = %d, want 1", d.Param)
	}
}

// lockOf returns the lock of the first directive on name.
func (c *checked) lockOf(t *testing.T, name string) *LockPath {
	t.Helper()
	ds := c.set.Of(c.lookup(t, name))
	if len(ds) == 0 || ds[0].Lock == nil {
		t.Fatalf("%s: no resolved lock", name)
	}
	return ds[0].Lock
}

func fieldPath(lp *LockPath) []string {
	var names []string
	for _, f := range lp.Fields {
		names = append(names, f.Name())
	}
	return names
}

func TestCollectLockPaths(t *testing.T) {
	c := collectSource(t, attachSource, nil)
	tests := []struct {
		name      string
		root      PathRoot
		param     int
		global    string
		fields    []string
		class     string // "" for none
		readWrite bool
	}{
		{name: "Conn.count", root: RootField, fields: []string{"mu"}, class: "mu"},
		{name: "Conn.hits", root: RootField, fields: []string{"rw"}, class: "rw", readWrite: true},
		{name: "Conn.promoted", root: RootField, fields: []string{"Embeds", "Mutex"}, class: "Mutex"},
		{name: "Conn.viaPointer", root: RootField, fields: []string{"inner", "mu"}, class: "mu"},
		{name: "Conn.external", root: RootGlobal, global: "Mu", class: "Mu"},
		{name: "Conn.byGlobal", root: RootGlobal, global: "global", class: "global"},
		{name: "Conn.byGlobalField", root: RootGlobal, global: "shared", fields: []string{"Mu"}, class: "Mu", readWrite: true},
		{name: "Conn.order", root: RootField, fields: []string{"rw"}, class: "rw", readWrite: true},
		{name: "Conn.locked", root: RootReceiver, fields: []string{"mu"}, class: "mu"},
		{name: "Conn.lockedCL", root: RootReceiver, fields: []string{"mu"}, class: "mu"},
		{name: "readP", root: RootParam, param: 0, fields: []string{"rw"}, class: "rw", readWrite: true},
		{name: "newLocked", root: RootResult, param: 0, fields: []string{"mu"}, class: "mu"},
		{name: "lockParam", root: RootParam, param: 0},
	}
	for _, tt := range tests {
		lp := c.lockOf(t, tt.name)
		global := ""
		if lp.Global != nil {
			global = lp.Global.Name()
		}
		class := ""
		if lp.Class != nil {
			class = lp.Class.Name()
		}
		if lp.Root != tt.root || lp.Param != tt.param || global != tt.global ||
			!slices.Equal(fieldPath(lp), tt.fields) || class != tt.class || lp.ReadWrite != tt.readWrite {
			t.Errorf("%s: root %d param %d global %q fields %q class %q rw %v; want %d %d %q %q %q %v", tt.name,
				lp.Root, lp.Param, global, fieldPath(lp), class, lp.ReadWrite,
				tt.root, tt.param, tt.global, tt.fields, tt.class, tt.readWrite)
		}
	}
	// Paths written differently that name one lock are the same path.
	if !samePath(c.lockOf(t, "Conn.locked"), c.lockOf(t, "Conn.lockedCL")) {
		t.Error("requires mu and +checklocks:c.mu on methods of one receiver differ")
	}
	alias, _ := c.set.Find(c.lookup(t, "Conn"), Alias)
	if alias.Lock == nil || alias.AliasOf == nil || !slices.Equal(fieldPath(alias.Lock), []string{"inner", "mu"}) {
		t.Errorf("alias: %+v", alias)
	}
}

func TestCollectPlacement(t *testing.T) {
	src := `//confined:control
package p

//confined:control
import "sync"

//confined:guardedby mu
const k = 1

//confined:entry
type T struct {
	mu sync.Mutex
	//confined:entry
	f int
	//confined:requires mu
	g int
	// +checklocksread:mu
	h int
}

//confined:guardedby mu
func (t *T) m() {}

//confined:control
type N int

//confined:atomic
type S struct{}

var x int //confined:control

//confined:control

func floating() {}

type I interface {
	//confined:any
	M()
}

func body() {
	f := func() {}
	f()
	//confined:control
	go body()
	//confined:guardedby mu
	var local int
	_ = local
}

// +checklocksforce
type F struct{}

//confined:alias a=b
type A = T

var hook = func() {
	//confined:atomic
	println()
}

//confined:ignore nothing follows`
	c := collectSource(t, src, nil)
	c.wantProblems(t,
		want{"//confined:control\npackage", CategoryPlacement, "not allowed on the package clause"},
		want{"//confined:control\nimport", CategoryPlacement, "not allowed on an import declaration"},
		want{"//confined:guardedby mu\nconst", CategoryPlacement, "//confined:guardedby is not allowed on a const declaration; it belongs on a struct field or a package-level var"},
		want{"//confined:entry\ntype T", CategoryPlacement, "//confined:entry is not allowed on type T; it belongs on a func declaration"},
		want{"//confined:entry\n\tf int", CategoryPlacement, "not allowed on field T.f"},
		want{"//confined:requires mu\n\tg", CategoryPlacement, "use //confined:guardedby"},
		want{"+checklocksread:mu", CategoryPlacement, "+checklocks covers both reads and writes"},
		want{"//confined:guardedby mu\nfunc", CategoryPlacement, "use //confined:requires"},
		want{"//confined:control\ntype N", CategoryPlacement, "not allowed on non-struct type N"},
		want{"//confined:atomic\ntype S", CategoryPlacement, "//confined:atomic is not allowed on type S"},
		want{"var x int //confined:control", CategoryPlacement, "only struct fields take trailing directives"},
		want{"//confined:control\n\nfunc floating", CategoryPlacement, "attached to no declaration"},
		want{"//confined:any\n\tM()", CategoryPlacement, "not allowed on an interface method"},
		want{"//confined:control\n\tgo body", CategoryPlacement, "not allowed on a statement"},
		want{"//confined:guardedby mu\n\tvar local", CategoryPlacement, "not allowed on a local var declaration"},
		want{"+checklocksforce\ntype F", CategoryPlacement, "+checklocksforce is not allowed on type F; it belongs on a func declaration or a statement"},
		want{"//confined:alias a=b", CategoryPlacement, "not allowed on non-struct type A"},
		want{"//confined:atomic\n\tprintln", CategoryPlacement, "//confined:atomic is not allowed on a statement"},
		want{"//confined:ignore nothing follows", CategoryPlacement, "//confined:ignore applies to nothing here"},
	)
	for _, p := range c.set.Problems {
		if p.Category == CategoryPlacement && strings.Contains(p.Message, "const") && strings.Contains(p.Message, "use //confined:requires") {
			t.Errorf("hint for a func on a const: %s", p.Message)
		}
	}
	// Lock verbs are reported by lockorder, ownership verbs by confined.
	owners := map[string]string{}
	for _, p := range c.set.Problems {
		owners[c.src[p.Pos-1:min(int(p.End)-1, len(c.src))]] = p.Analyzer
	}
	if owners["//confined:guardedby mu"] != LockOrder || owners["//confined:entry"] != Confined {
		t.Errorf("owners: %v", owners)
	}
}

func TestCollectConflicts(t *testing.T) {
	src := `package p

import "sync"

//confined:entry poll
func poller() {}

//confined:entry shard
func sharder() {}

//confined:entry
//confined:callback
func entryCallback() {}

//confined:entry poll
//confined:any
func entryAny() {}

//confined:control poll
//confined:control shard
func twoRoles() {}

//confined:control
//confined:any
func controlAny() {}

//confined:drain poll
//confined:control shard
func drainOther() {}

//confined:drain
//confined:callback
func drainCallback() {}

//confined:spawns f
//confined:spawns f
func spawnsTwice(f func()) {}

//confined:requires mu
//confined:excludes c.mu
func (c *C) requiresExcludes() {}

//confined:requires mu
// +checklocks:c.mu
func (c *C) requiresTwice() {}

//confined:acquires mu
//confined:requires mu
func (c *C) acquiresRequired() {}

//confined:requires mu
//confined:requires_shared rw
//confined:excludes_write rw
func (c *C) differentLocks() {}

//confined:control poll
//confined:alias p.mu=mu
// +checklocksalias:mu=p.mu
type C struct {
	mu sync.Mutex
	rw sync.RWMutex
	p  *C
	//confined:guardedby mu
	// +checklocks:mu
	a int
	//confined:control shard
	b int
	//confined:control poll
	c int
	//confined:atomic
	// +checkatomic
	d int32
}

//confined:control poll
//confined:control shard
var state int
`
	c := collectSource(t, src, nil)
	c.wantProblems(t,
		want{"//confined:callback\nfunc entryCallback", CategoryConflict, "//confined:callback contradicts //confined:entry on line 11: a function is confined to one role"},
		want{"//confined:any\nfunc entryAny", CategoryConflict, "contradicts //confined:entry poll"},
		want{"//confined:control shard\nfunc twoRoles", CategoryConflict, "//confined:control shard contradicts //confined:control poll"},
		want{"//confined:any\nfunc controlAny", CategoryConflict, "contradicts //confined:control"},
		want{"//confined:control shard\nfunc drainOther", CategoryConflict, "runs on its role's goroutine"},
		want{"//confined:callback\nfunc drainCallback", CategoryConflict, "a drain runs on its role's goroutine"},
		want{"//confined:spawns f\nfunc spawnsTwice", CategoryConflict, "//confined:spawns f repeats //confined:spawns f"},
		want{"//confined:excludes c.mu", CategoryConflict, "incompatible lock states for c.mu"},
		want{"// +checklocks:c.mu\nfunc (c *C) requiresTwice", CategoryConflict, "+checklocks:c.mu repeats //confined:requires mu"},
		want{"//confined:requires mu\nfunc (c *C) acquiresRequired", CategoryConflict, "contradicts //confined:acquires mu"},
		want{"+checklocksalias:mu=p.mu", CategoryConflict, "repeats //confined:alias p.mu=mu"},
		want{"// +checklocks:mu\n\ta int", CategoryConflict, "repeats //confined:guardedby mu"},
		want{"//confined:control shard\n\tb int", CategoryConflict, "contradicts //confined:control poll on its struct type C"},
		want{"// +checkatomic\n\td", CategoryConflict, "+checkatomic repeats //confined:atomic"},
		want{"//confined:control shard\nvar state", CategoryConflict, "state has one owning role"},
	)
	// The first of two conflicting directives stays.
	if got := c.verbs(t, "entryCallback"); !slices.Equal(got, []string{"entry control"}) {
		t.Errorf("entryCallback keeps %q", got)
	}
	if got := c.verbs(t, "C.differentLocks"); len(got) != 3 {
		t.Errorf("directives on different locks conflict: %q", got)
	}
	if got := c.verbs(t, "C.c"); !slices.Equal(got, []string{"control poll"}) {
		t.Errorf("a field may repeat its struct's role: %q", got)
	}
}

func TestCollectResolutionProblems(t *testing.T) {
	src := `package p

import (
	"sync"

	"example.com/locks"
)

//confined:entry poll
func poller() {}

type state struct{ n int }

type T struct {
	mu    sync.Mutex
	count int
	st    state
	vals  struct{ a, b sync.Mutex }
	//confined:guardedby count
	a int
	//confined:guardedby mux
	b int
	//confined:guardedby st.mu
	c int
	//confined:guardedby locks.Count
	d int
	//confined:guardedby nosuch.Mu
	e int
	//confined:before mu
	f int
	//confined:before g
	g sync.Mutex
	//confined:control pol
	h int
}

//confined:requires c.count
func (c *T) m1() {}

//confined:requires nope
func (c *T) m2(x int) {}

//confined:requires_shared mu
func (c *T) m3() {}

// +checklocksread:c.mu
func (c *T) m4() {}

//confined:requires ret.mu
func m5() (ret *T) { return nil }

//confined:spawns fn
func s1(f func()) {}

//confined:spawns n
func s2(n int) {}

//confined:control shard
func r1() {}

//confined:drain pol
func r2() {}

//confined:alias mu=mu
type A1 struct{ mu sync.Mutex }

//confined:alias mu=in.mu
type A2 struct {
	mu sync.Mutex
	in struct{ mu sync.Mutex }
}

//confined:alias vals.a=vals.b
type A3 struct{ vals struct{ a, b sync.Mutex } }

var lock sync.Mutex

//confined:before lock
var lock2 sync.Mutex

//confined:before lock3
var lock3 sync.Mutex

//confined:guardedby missing
var v int

var _ = &locks.Mu
`
	c := collectSource(t, src, nil)
	c.wantProblems(t,
		want{"//confined:guardedby count", CategoryLock, "//confined:guardedby: count is not a lock (type int)"},
		want{"//confined:guardedby mux", CategoryLock, "mux is not a field of struct T or a package-level var; did you mean mu?"},
		want{"//confined:guardedby st.mu", CategoryLock, "st has no field mu (type state)"},
		want{"//confined:guardedby locks.Count", CategoryLock, "locks.Count is not a lock (type int)"},
		want{"//confined:guardedby nosuch.Mu", CategoryLock, "nosuch is not a field of struct T or a package-level var"},
		want{"//confined:before mu\n\tf int", CategoryPlacement, "//confined:before belongs on a lock field or var; field T.f has type int"},
		want{"//confined:before g", CategoryLock, "a lock cannot be ordered before itself"},
		want{"//confined:control pol", CategoryRole, `role "pol" is not declared by any //confined:entry in this package or its imports; did you mean "poll"?`},
		want{"//confined:requires c.count", CategoryLock, "c.count is not a lock (type int)"},
		want{"//confined:requires nope", CategoryLock, "nope is not a receiver field, the receiver, a parameter or a package-level var of func (*T).m2"},
		want{"//confined:requires_shared mu", CategoryLock, "mu has no shared mode (no RLock/RUnlock); use //confined:requires"},
		want{"+checklocksread:c.mu", CategoryLock, "use +checklocks"},
		want{"//confined:requires ret.mu", CategoryLock, "ret is not a parameter or a package-level var of func m5"},
		want{"//confined:spawns fn", CategoryParam, "func s1 has no parameter fn"},
		want{"//confined:spawns n", CategoryParam, "parameter n has type int, not a function type"},
		want{"//confined:control shard", CategoryRole, `role "shard" is not declared`},
		want{"//confined:drain pol", CategoryRole, `did you mean "poll"?`},
		want{"//confined:alias mu=mu", CategoryLock, "mu and mu are the same lock already"},
		want{"//confined:alias mu=in.mu", CategoryLock, "two different locks inside every A2 value"},
		want{"//confined:alias vals.a=vals.b", CategoryLock, "two different locks"},
		want{"//confined:before lock3", CategoryLock, "a lock cannot be ordered before itself"},
		want{"//confined:guardedby missing", CategoryLock, "missing is not a package-level var of package p"},
	)
	for _, p := range c.set.Problems {
		if p.Category == CategoryRole && p.Analyzer == RevokePath {
			return // drain's role problem belongs to revokepath
		}
	}
	t.Error("the role problem of //confined:drain is not reported by revokepath")
}

func TestCollectImportedRoles(t *testing.T) {
	src := `package p

//confined:control ui
func paint() {}

//confined:commit net
func ack() {}
`
	c := collectSource(t, src, func(role string) bool { return role == "ui" })
	c.wantProblems(t, want{"//confined:commit net", CategoryRole, `role "net" is not declared`})
	if got := c.verbs(t, "paint"); !slices.Equal(got, []string{"control ui"}) {
		t.Errorf("paint: %q", got)
	}
	if len(c.set.Roles) != 0 {
		t.Errorf("Roles = %q; imported roles are not this package's", c.set.Roles)
	}
}

func TestCollectIgnoresAndForces(t *testing.T) {
	src := `package p

func f() {
	//confined:ignore the loop has not started yet
	x := 1
	_ = x //confined:ignore trailing
	// +checklocksignore
	// more words about it
	x++
	x-- // +checklocksforce: held by caller
	// +checklocksforce
	x++
	//confined:ignore dangling

}

//confined:ignore the whole function
func g() {}

type T struct {
	n int // +checklocksignore: mu is inferred
}

//confined:ignore
func h() {}

// +checklocksignore
var v = 1

func k() {
	k()
	// +checklocksforce: dangling
}
`
	c := collectSource(t, src, nil)
	c.wantProblems(t,
		want{"//confined:ignore dangling", CategoryPlacement, "//confined:ignore applies to nothing here: put it on the line directly above a statement, at the end of the statement's line, or in a declaration's doc comment"},
		want{"//confined:ignore\nfunc h", CategoryIgnoreReason, "//confined:ignore needs a reason"},
		want{"+checklocksforce: dangling", CategoryPlacement, "+checklocksforce applies to nothing here: put it on the line directly above a statement, at the end of the statement's line, or in a func's doc comment"},
	)
	type ig struct {
		line      int
		reason    string
		analyzers []string
		decl      bool
	}
	var got []ig
	for _, i := range c.set.Ignores {
		if i.File != "p.go" {
			t.Errorf("ignore file %q", i.File)
		}
		got = append(got, ig{i.Line, i.Reason, i.Analyzers, i.DeclPos.IsValid()})
	}
	lock := []string{LockOrder}
	wantIgnores := []ig{
		{lineOf(t, src, "x := 1"), "the loop has not started yet", nil, false},
		{lineOf(t, src, "_ = x"), "trailing", nil, false},
		{lineOf(t, src, "x++\n\tx--"), "", lock, false},
		{lineOf(t, src, "func g"), "the whole function", nil, true},
		{lineOf(t, src, "var v"), "", lock, true},
	}
	if !reflect.DeepEqual(got, wantIgnores) {
		t.Errorf("ignores:\n got %+v\nwant %+v", got, wantIgnores)
	}
	// On a field, +checklocksignore is a property of the field.
	if n := c.lookup(t, "T.n"); len(c.set.Of(n)) != 1 || c.set.Of(n)[0].Verb != Ignore {
		t.Errorf("field T.n: directives %+v, want the +checklocksignore property", c.set.Of(n))
	}
	g := c.set.Ignores[3]
	fn := c.lookup(t, "g")
	if !(g.DeclPos <= fn.Pos() && fn.Pos() < g.DeclEnd) {
		t.Errorf("the ignore on g does not span g")
	}
	var forces []int
	for _, d := range c.set.Forces {
		forces = append(forces, d.Line)
	}
	if want := []int{lineOf(t, src, "x--"), lineOf(t, src, "x++\n\t//confined:ignore dangling")}; !slices.Equal(forces, want) {
		t.Errorf("force lines %v, want %v", forces, want)
	}
}

// With the real standard library, locks are recognised by method set:
// sync.Locker fields are locks, sync.WaitGroup is not.
func TestCollectRealSync(t *testing.T) {
	src := `package p

import "sync"

type T struct {
	mu sync.Mutex
	rw *sync.RWMutex
	l  sync.Locker
	wg sync.WaitGroup
	//confined:guardedby mu
	a int
	//confined:guardedby rw
	b int
	//confined:guardedby l
	c int
	//confined:guardedby wg
	d int
}
`
	c := collectWith(t, src, sourceImporter, nil)
	c.wantProblems(t, want{"//confined:guardedby wg", CategoryLock, "wg is not a lock (type sync.WaitGroup)"})
	if !c.lockOf(t, "T.b").ReadWrite || c.lockOf(t, "T.a").ReadWrite || c.lockOf(t, "T.c").ReadWrite {
		t.Error("ReadWrite wrong")
	}
}

// Collect survives files with type errors, missing type information, a
// nil package and a nil file set.
func TestCollectBrokenInput(t *testing.T) {
	src := `package p

import "sync"

//confined:requires mu
func (c *Missing) m() {}

type T struct {
	mu Undefined
	//confined:guardedby mu
	a int
	//confined:guardedby mu.x
	b int
}

//confined:spawns f
func s(f UndefinedFunc) {}

//confined:alias a=b
type U struct{ a, b *sync.Mutex }

//confined:control poll
var v = undefined
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	info := newInfo()
	conf := &types.Config{Importer: stubImporter(), Error: func(error) {}}
	pkg, _ := conf.Check("example.com/p", fset, []*ast.File{f}, info)
	set := Collect(fset, []*ast.File{f}, pkg, info, nil)
	if len(set.Problems) == 0 {
		t.Error("no problems reported for unresolvable locks")
	}
	// Without any type information, placement is still checked.
	set = Collect(fset, []*ast.File{f, nil}, nil, nil, nil)
	for _, p := range set.Problems {
		if p.Category != CategoryPlacement && p.Category != CategoryRole {
			t.Errorf("unexpected problem without types: %+v", p)
		}
	}
	_ = Collect(nil, []*ast.File{f}, nil, nil, nil)
	_ = Collect(nil, nil, nil, nil, nil)
}

// Collect is deterministic: two runs give identical results.
func TestCollectDeterministic(t *testing.T) {
	for range 3 {
		a := collectSource(t, attachSource, nil)
		b := collectSource(t, attachSource, nil)
		if !reflect.DeepEqual(a.problems(), b.problems()) || !reflect.DeepEqual(a.set.Roles, b.set.Roles) {
			t.Fatal("two runs differ")
		}
		for _, name := range []string{"Conn", "Conn.hits", "Conn.flush", "lockGlobal"} {
			if !slices.Equal(a.verbs(t, name), b.verbs(t, name)) {
				t.Fatalf("%s: two runs differ", name)
			}
		}
	}
}

func TestCollectGenericsAndLocalTypes(t *testing.T) {
	src := `package p

import "sync"

type G[K comparable] struct {
	mu sync.Mutex
	//confined:guardedby mu
	m map[K]int
}

//confined:requires mu
func (g *G[K]) put(k K) {}

var gv G[int]

//confined:guardedby gv.mu
var gn int

func local() {
	type L struct {
		mu sync.RWMutex
		//confined:guardedby mu
		n int
	}
	_ = L{}
}
`
	c := collectSource(t, src, nil)
	c.wantProblems(t)
	origin := c.lookup(t, "G.mu")
	for _, name := range []string{"G.m", "G.put", "gn"} {
		if lp := c.lockOf(t, name); lp.Class != origin {
			t.Errorf("%s: class %v, want the generic origin field %v", name, lp.Class, origin)
		}
	}
	found := false
	for obj, ds := range c.set.Objects {
		if obj.Name() == "n" && len(ds) == 1 && ds[0].Lock != nil && ds[0].Lock.ReadWrite {
			found = true
		}
	}
	if !found {
		t.Error("the field of a local struct type has no guardedby")
	}
}

// A directive problem names the declaration its comment documents, also
// for a comment that does not parse.
func TestProblemRelatesDeclaration(t *testing.T) {
	src := `package p

import "sync"

type T struct {
	mu sync.Mutex
	// +checklocks:nomu
	x int
	// +checklocksalias:mu
	y int
}
`
	c := collectSource(t, src, nil)
	if len(c.set.Problems) != 2 {
		t.Fatalf("problems: %+v", c.set.Problems)
	}
	for i, field := range []string{"T.x", "T.y"} {
		p, obj := c.set.Problems[i], c.lookup(t, field)
		if p.Decl != obj.Pos() || p.DeclName != obj.Name() {
			t.Errorf("problem %q: Decl %v %q, want %s at %v", p.Message, p.Decl, p.DeclName, field, obj.Pos())
		}
	}
}

// TestCollectReadAny: the readany word is a property of a field with
// several guards; on a field with fewer, or anywhere else, it is a
// problem and is dropped.
func TestCollectReadAny(t *testing.T) {
	src := `package p

import "sync"

type T struct {
	mu, other sync.Mutex
	// +checklocks:mu
	// +checklocks:other
	both int // +checklocksreadany
	// +checklocks:mu
	// +checklocksreadany
	// +checklocks:nosuch
	unresolved int
	// +checklocks:mu
	single int // +checklocksreadany
	bare   int // +checklocksreadany
}

// +checklocksreadany
func f() {}
`
	c := collectSource(t, src, nil)
	c.wantProblems(t,
		want{"+checklocks:nosuch", CategoryLock, "nosuch"},
		want{"bare   int", CategoryPlacement, "field bare, which has no guard"},
		want{"// +checklocksreadany\nfunc f", CategoryPlacement, "not allowed on func f"},
	)
	if got, want := c.verbs(t, "T.both"), []string{"guardedby mu", "guardedby other", "readany"}; !slices.Equal(got, want) {
		t.Errorf("T.both: %q, want %q", got, want)
	}
	// A guard with a problem of its own still counts: one problem, not two.
	if got, want := c.verbs(t, "T.unresolved"), []string{"guardedby mu", "readany"}; !slices.Equal(got, want) {
		t.Errorf("T.unresolved: %q, want %q", got, want)
	}
	if got, want := c.verbs(t, "T.single"), []string{"guardedby mu"}; !slices.Equal(got, want) {
		t.Errorf("T.single: %q, want %q (one guard: the readany dropped, silently)", got, want)
	}
	for _, p := range c.set.Problems {
		if p.Category == CategoryPlacement && p.DeclName == "" {
			t.Errorf("problem %q names no declaration", p.Message)
		}
	}
}
