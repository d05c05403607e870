package roots

import (
	"go/token"
	"go/types"
	"sync"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/program"
)

// Kind says how a goroutine context starts.
type Kind uint8

const (
	KindEntry      Kind = iota // a //confined:entry ROLE function: ROLE's goroutine
	KindDeclared               // an exported or escaping function declared to run on ROLE
	KindGo                     // a go statement whose target is not an entry
	KindAsync                  // a function value passed to an asynchronous API
	KindInterface              // a method implementing an asynchronous interface
	KindCallback               // a //confined:callback function
	KindSerialized             // a //confined:serialized ROLE function: foreign, but runs as ROLE
	KindAny                    // a //confined:any function: safe from any goroutine
	KindUnknown                // exported or escaping, undeclared: callers unknown
)

// Root is where a context starts.
type Root struct {
	Kind Kind
	// Role is the role the context runs as: the entry's or the declared
	// role. Empty for foreign contexts (go statements, callbacks...).
	Role string
	Func *ssa.Function // the function run at the root (nil if not ours)
	Pos  token.Pos     // go statement, registering call, or the func
	// Via names the root for messages: "go statement",
	// "kgo.OnPartitionsRevoked", "http.Handler.ServeHTTP".
	Via string
}

// Foreign reports whether code on this root runs on a goroutine that owns
// no role (so it may touch no confined state).
func (r *Root) Foreign() bool { return r.Role == "" && r.Kind != KindUnknown }

// Describe is a phrase for messages: "the goroutine started by
// kgo.OnPartitionsRevoked", "control's goroutine".
func (r *Root) Describe() string {
	switch r.Kind {
	case KindEntry, KindDeclared:
		return r.Role + "'s goroutine"
	case KindSerialized:
		return "the goroutine running " + r.Via + " (serialized with " + r.Role + ")"
	case KindGo:
		return "the goroutine started by the go statement"
	case KindAsync:
		return "the goroutine started by " + r.Via
	case KindInterface:
		return "a " + r.Via + " goroutine"
	case KindCallback:
		return "the goroutine running callback " + r.Via
	case KindAny:
		return "any goroutine (" + r.Via + " is //confined:any)"
	}
	return "unknown callers' goroutines (" + r.Via + ")"
}

// Reach is one way a function runs in a context: the root and the chain of
// calls from the root's function to it.
//
// The chain is a link to the last call, each link pointing to its caller's:
// every function a root reaches shares the links of its callers, so a
// propagation costs one link per (root, function), not a copy of the whole
// chain. Chain and Sites build the slices when a message needs them.
type Reach struct {
	Root *Root
	last *link
}

// link is one call on a chain: fn, called at site from parent's function
// (site is NoPos and parent nil at the root).
type link struct {
	fn     *ssa.Function
	site   token.Pos
	parent *link
	depth  int32 // number of links before this one
}

// Func is the function reached: the chain's last.
func (r Reach) Func() *ssa.Function { return r.last.fn }

// Chain is the calls from the root's function (Chain()[0]) to the function
// reached (the last).
func (r Reach) Chain() []*ssa.Function {
	out := make([]*ssa.Function, r.last.depth+1)
	for l := r.last; l != nil; l = l.parent {
		out[l.depth] = l.fn
	}
	return out
}

// Sites are the call sites along the chain: Sites()[i] is where Chain()[i]
// calls Chain()[i+1].
func (r Reach) Sites() []token.Pos {
	out := make([]token.Pos, r.last.depth)
	for l := r.last; l.parent != nil; l = l.parent {
		out[l.depth-1] = l.site
	}
	return out
}

// Edge is a synchronous call from one function of the package to another
// (including function values assumed to be called synchronously).
type Edge struct {
	Callee *ssa.Function
	Site   token.Pos
}

// Contexts is the result for one package.
type Contexts struct {
	Roots []*Root
	// reach is computed on the first Of: most packages (dependencies
	// without directives or blocking lock checks) never ask.
	reachOnce sync.Once
	reach     map[*ssa.Function][]Reach
	// callers and rootsAt invert calls and Roots, built on the first
	// RootsReaching (see callers.go).
	callersOnce sync.Once
	callers     map[*ssa.Function][]*ssa.Function
	rootsAt     map[*ssa.Function][]*Root
	calls       map[*ssa.Function][]Edge
	// rootOf marks functions whose context is fixed by declaration or by
	// being a root, so inference stops there.
	rootOf map[*ssa.Function]*Root
	// escapes marks functions whose address escapes.
	escapes map[*ssa.Function]bool
	// asyncArgs lists, per call of an asynchronous API, the function
	// values it runs on another goroutine (AsyncArgs).
	asyncArgs map[ssa.CallInstruction][]ssa.Value
	// Objects answers which object a value is and when a fresh object is
	// published, for every engine (see package objects).
	Objects *objects.Index
}

// Of returns the contexts fn can run on, roots in discovery order.
func (c *Contexts) Of(fn *ssa.Function) []Reach {
	c.reachOnce.Do(c.propagate)
	return c.reach[fn]
}

// Calls returns fn's synchronous calls to functions of this package.
func (c *Contexts) Calls(fn *ssa.Function) []Edge { return c.calls[fn] }

// RootOf returns the root fn itself is, if any.
func (c *Contexts) RootOf(fn *ssa.Function) *Root { return c.rootOf[fn] }

// Escapes reports whether fn's address escapes (stored, converted to an
// interface, returned or passed to an asynchronous API).
func (c *Contexts) Escapes(fn *ssa.Function) bool { return c.escapes[fn] }

// AsyncArgs returns the arguments of call that it runs on another
// goroutine: the function values given to an asynchronous API
// (time.AfterFunc, errgroup.Go, a //confined:spawns parameter...),
// whatever they are (a function, a closure, a value read from a field).
func (c *Contexts) AsyncArgs(call ssa.CallInstruction) []ssa.Value { return c.asyncArgs[call] }

// startsGoroutine reports whether fn runs on a goroutine of its own that
// owns no role: a go target or an asynchronous API's argument (handing a
// closure over an object to it publishes the object).
func (c *Contexts) startsGoroutine(fn *ssa.Function) bool {
	r := c.rootOf[fn]
	return r != nil && r.Foreign()
}

// Names renders a reach's chain: "onRevoked -> resetCounters".
func (r Reach) Names(from *types.Package) []string {
	chain := r.Chain()
	out := make([]string, len(chain))
	for i, fn := range chain {
		out[i] = program.FuncName(fn, from)
	}
	return out
}

// Compute finds the roots of p and propagates them through synchronous calls
// to every function they reach.
func Compute(p *program.Package, table *Table) *Contexts {
	b := &builder{p: p, table: table, c: &Contexts{
		reach:     map[*ssa.Function][]Reach{},
		calls:     map[*ssa.Function][]Edge{},
		rootOf:    map[*ssa.Function]*Root{},
		escapes:   map[*ssa.Function]bool{},
		asyncArgs: map[ssa.CallInstruction][]ssa.Value{},
	}}
	b.c.Objects = objects.New(p.Funcs, b.c.startsGoroutine)
	b.c.Objects.SetImported(p.ImportedParamFlows)
	if w := closedWorld(p); w != nil {
		b.c.Objects.SetClosedWorld(w)
	}
	for _, fn := range p.Funcs {
		b.scan(fn)
	}
	// Package-level var initializers live in the synthetic init, which is
	// no source function: scan it too, so var hook = f makes f escape.
	if init := p.SSA.Pkg.Func("init"); init != nil && !p.FuncSet[init] {
		b.scan(init)
	}
	// Interface roots first: an exported ServeHTTP or ConsumeClaim is a
	// handler root, not an unknown-callers one (declaredRoot skips
	// functions already rooted).
	b.interfaceRoots()
	for _, fn := range p.Funcs {
		b.declaredRoot(fn)
	}
	return b.c
}

type builder struct {
	p     *program.Package
	table *Table
	c     *Contexts
	impls map[*types.Func][]*ssa.Function // cache of implementations
	// uses memoises what functions do with the function values they
	// are given (handoff.go).
	uses map[ssa.Value]use
	// declared holds the asynchronous APIs declared in code (this
	// package's //confined:async and its imports' AsyncAPIs facts); nil
	// until the first call passes a function value.
	declared *Table
}

func (b *builder) addRoot(r *Root) {
	if r.Func != nil {
		if _, ok := b.c.rootOf[r.Func]; !ok || r.Kind < b.c.rootOf[r.Func].Kind {
			b.c.rootOf[r.Func] = r
		}
	}
	b.c.Roots = append(b.c.Roots, r)
}

// declaredRoot makes fn a root if its declaration or visibility fixes its
// context.
func (b *builder) declaredRoot(fn *ssa.Function) {
	d := b.p.FuncDecl(fn)
	name := program.FuncName(fn, b.p.Pass.Pkg)
	if it, ok := d.Has(string(directive.Entry)); ok {
		b.addRoot(&Root{Kind: KindEntry, Role: it.Role, Func: fn, Pos: fn.Pos(), Via: name})
		return
	}
	if it, ok := d.Has(string(directive.Serialized)); ok {
		b.addRoot(&Root{Kind: KindSerialized, Role: it.Role, Func: fn, Pos: fn.Pos(), Via: name})
		return
	}
	if _, ok := d.Has(string(directive.Callback)); ok {
		b.addRoot(&Root{Kind: KindCallback, Func: fn, Pos: fn.Pos(), Via: name})
		return
	}
	exported := fn.Parent() == nil && fn.Object() != nil && (fn.Object().Exported() || fn.Name() == "main" || fn.Name() == "init")
	if !exported && !b.c.escapes[fn] {
		return
	}
	if role, ok := DeclaredRole(d); ok {
		b.addRoot(&Root{Kind: KindDeclared, Role: role, Func: fn, Pos: fn.Pos(), Via: name})
		return
	}
	if _, ok := d.Has(string(directive.Any)); ok {
		b.addRoot(&Root{Kind: KindAny, Func: fn, Pos: fn.Pos(), Via: name})
		return
	}
	if _, already := b.c.rootOf[fn]; already {
		return
	}
	b.addRoot(&Root{Kind: KindUnknown, Func: fn, Pos: fn.Pos(), Via: name})
}

// RunsAs reports the role that a function declared d runs as whoever calls
// it, and whichever goroutine that is: an entry of ROLE is the body of
// ROLE's goroutine, so calling it (go x.run(), go func() { x.run() }(),
// g.Go(func() error { return x.run() }), or a plain call at the end of a
// goroutine's setup) starts ROLE on that goroutine; a serialized ROLE
// function runs as ROLE by its declaration. Code below such a call is
// ROLE's, never the caller's: the engines judge it on the function's own
// root and do not charge it to the caller's context.
func RunsAs(d *facts.Decl) (string, bool) {
	for _, v := range []directive.Verb{directive.Entry, directive.Serialized} {
		if it, ok := d.Has(string(v)); ok {
			return it.Role, true
		}
	}
	return "", false
}

// DeclaredRole is the role a declaration confines a function to: control,
// drain and commit each name one.
func DeclaredRole(d *facts.Decl) (string, bool) {
	for _, v := range []directive.Verb{directive.Control, directive.Drain, directive.Commit} {
		if it, ok := d.Has(string(v)); ok {
			return it.Role, true
		}
	}
	return "", false
}
