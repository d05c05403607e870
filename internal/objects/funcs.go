package objects

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// Func values: which of the package's functions a func-typed value may
// hold when it is not one function known where it is used. A callback
// reaches a field, a map or a slice through a chain of plain moves (a
// setter's parameter, a functional option's captured argument, a
// composite literal, append); FuncsOf follows the chain back to the
// functions and closures at its start.

// FuncsOf returns the functions (closures and method-value wrappers as
// created, in the order first found) that v, a func-typed value of fn, may
// hold: followed through conversions and captured variables, a parameter
// of a package function to the arguments of its calls in the package, a
// field or package var to every func stored into it (a var's initializer
// included), an element of a map, slice or array to every func stored
// into the container (a value received from a channel to every func sent
// on it), the result of a call of package functions to what they return.
// Values it cannot follow (another package's fields and functions)
// contribute nothing.
func (x *Index) FuncsOf(fn *ssa.Function, v ssa.Value) []*ssa.Function {
	if ix, sig := assertedFunc(v); sig != nil {
		// An interface value asserted to a func type (`switch f :=
		// funcMap[name].(type) { case func(string) HTML: f(s) }`): the
		// functions of that type it may hold.
		var out []*ssa.Function
		for _, f := range x.FuncsOf(fn, ix) {
			if types.Identical(f.Signature, sig) {
				out = append(out, f)
			}
		}
		return out
	}
	fs := x.funcRecord()
	fn, v = x.Resolve(fn, v)
	key := x.funcKey(v)
	if key != nil {
		if out, ok := fs.memo[key]; ok {
			return out
		}
	}
	r := &funcWalk{x: x, seen: map[any]bool{}}
	r.value(fn, v, 0)
	if key != nil {
		fs.memo[key] = r.out
	}
	return r.out
}

// IsElement reports whether v, a value of fn, is read from an element of
// a container FuncsOf follows (a map, slice, array or channel named by
// where it lives).
func (x *Index) IsElement(fn *ssa.Function, v ssa.Value) bool {
	if ix, sig := assertedFunc(v); sig != nil {
		v = ix // the one func of the asserted type an element holds
	}
	_, v = x.Resolve(fn, v)
	if p := x.throughPointer(v); p != nil {
		v = p
	}
	key, elem := x.readFrom(v)
	return key != nil && elem
}

// throughPointer returns pf when v is `*pf`, a func loaded through a
// pointer that is itself read from a field, package var or container
// (`for _, pf := range onReload { (*pf)() }`); nil otherwise, as for a
// plain load of a func field or element, whose address is no such read.
func (x *Index) throughPointer(v ssa.Value) ssa.Value {
	u, ok := v.(*ssa.UnOp)
	if !ok || u.Op != token.MUL || !isFuncPointer(u.X.Type()) {
		return nil
	}
	if key, _ := x.readFrom(u.X); key == nil {
		return nil
	}
	return u.X
}

// funcStores is the package-wide record of func values stored into
// fields, package vars and containers, and of calls of package functions.
type funcStores struct {
	into  map[any][]Placed // by field, package var (types.Object) or container key
	calls map[*ssa.Function][]ssa.CallInstruction
	memo  map[any][]*ssa.Function
}

// maxFuncDepth bounds the moves FuncsOf follows back from a value.
const maxFuncDepth = 6

func (x *Index) funcRecord() *funcStores {
	if x.funcStores != nil {
		return x.funcStores
	}
	fs := &funcStores{into: map[any][]Placed{}, calls: map[*ssa.Function][]ssa.CallInstruction{}, memo: map[any][]*ssa.Function{}}
	add := func(key any, fn *ssa.Function, v ssa.Value) {
		if mi, ok := v.(*ssa.MakeInterface); ok && IsFunc(mi.X.Type()) {
			v = mi.X // a func kept as an interface value (a template's func map)
		}
		if key != nil && (IsFunc(v.Type()) || isChan(v.Type()) || isFuncPointer(v.Type())) {
			fs.into[key] = append(fs.into[key], Placed{fn, v})
		}
	}
	for _, fn := range x.withPackageInit() {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				switch in := instr.(type) {
				case *ssa.Store:
					switch a := in.Addr.(type) {
					case *ssa.FieldAddr:
						if f := lockop.FieldOf(a); f != nil {
							add(f, fn, in.Val)
						}
					case *ssa.Global:
						add(a.Object(), fn, in.Val)
					case *ssa.IndexAddr:
						add(x.containerKey(a.X, 0), fn, in.Val)
					}
				case *ssa.MapUpdate:
					add(x.containerKey(in.Map, 0), fn, in.Value)
				case *ssa.Send: // a channel of callbacks: a container too
					add(x.containerKey(in.Chan, 0), fn, in.X)
				case ssa.CallInstruction:
					if key, v := atomicStored(in.Common()); key != nil {
						add(key, fn, v)
					}
					callee := in.Common().StaticCallee()
					if in.Common().IsInvoke() {
						callee = ReceivingImplementation(fn, in.Common()) // `s.sched.Schedule(job)`
					}
					if callee != nil {
						if o := callee.Origin(); o != nil {
							callee = o
						}
						if x.funcSet[callee] {
							fs.calls[callee] = append(fs.calls[callee], in)
						}
					}
				}
			}
		}
	}
	x.funcStores = fs
	return fs
}

// CallsOf returns the package's static calls of fn, a package function
// (generic ones by their origin).
func (x *Index) CallsOf(fn *ssa.Function) []ssa.CallInstruction {
	return x.funcRecord().calls[fn]
}

// IsFunc reports whether t is a func type.
func IsFunc(t types.Type) bool {
	_, ok := t.Underlying().(*types.Signature)
	return ok
}

// funcKey is the memo key of a resolved func value read from memory or
// passed as a parameter: the field, package var, container or parameter.
func (x *Index) funcKey(v ssa.Value) any {
	switch u := v.(type) {
	case *ssa.Parameter:
		return u
	case *ssa.UnOp, *ssa.Field, *ssa.Lookup, *ssa.Index, *ssa.Extract, *ssa.TypeAssert, *ssa.Call:
		if k, _ := x.readFrom(v); k != nil {
			return k
		}
	}
	return nil
}

// funcWalk is one FuncsOf query.
type funcWalk struct {
	x    *Index
	seen map[any]bool
	out  []*ssa.Function
}

func (r *funcWalk) value(fn *ssa.Function, v ssa.Value, depth int) {
	if depth > maxFuncDepth {
		return
	}
	fn, v = r.x.Resolve(fn, v)
	switch u := v.(type) {
	case *ssa.Function:
		if !slices.Contains(r.out, u) {
			r.out = append(r.out, u)
		}
		return
	case *ssa.MakeClosure:
		r.value(fn, u.Fn, depth)
		return
	case *ssa.Phi:
		if r.once(u) {
			for _, e := range u.Edges {
				r.value(fn, e, depth+1)
			}
		}
		return
	case *ssa.Parameter:
		r.param(u, depth)
		return
	case *ssa.UnOp:
		if p := r.x.throughPointer(u); p != nil {
			r.pointee(fn, p, depth+1)
			return
		}
		// A func variable captured by a closure lives in a cell, read
		// and written through its address: every func stored into it
		// (`h := c.pick(); ...; go func() { h(c) }()`).
		if r.x.LocalCell(fn, u) {
			r.pointee(fn, u.X, depth+1)
			return
		}
	case *ssa.Call:
		if atomicLoaded(u) != nil {
			break // an atomic.Value's Load: a container read, below
		}
		// A callback made by a package function: what it returns.
		for _, callee := range r.x.Callees(u.Common()) {
			if r.once(callee) {
				for _, res := range ReturnedValues(callee) {
					r.value(callee, res, depth+1)
				}
			}
		}
		return
	}
	if key, _ := r.x.readFrom(v); key != nil && r.once(key) {
		for _, p := range r.x.funcRecord().into[key] {
			r.value(p.Fn, p.Val, depth+1)
		}
	}
}

// assertedFunc returns the interface value v asserts to a func type, and
// that type's signature: v is `x.(F)`, or its value in `f, ok := x.(F)`.
func assertedFunc(v ssa.Value) (ssa.Value, *types.Signature) {
	ta, ok := v.(*ssa.TypeAssert)
	if x, isExtract := v.(*ssa.Extract); isExtract && x.Index == 0 {
		ta, ok = x.Tuple.(*ssa.TypeAssert)
	} else if ok && ta.CommaOk {
		return nil, nil
	}
	if !ok {
		return nil, nil
	}
	sig, _ := ta.AssertedType.Underlying().(*types.Signature)
	if sig == nil {
		return nil, nil
	}
	return ta.X, sig
}

// pointee follows p, a pointer to a func variable, to what is stored
// through it: p is the variable itself, or is read from a field or
// container the package stores such pointers into (moby keeps its
// firewalld callbacks as `[]*func()`, to compare them by address).
func (r *funcWalk) pointee(fn *ssa.Function, p ssa.Value, depth int) {
	if depth > maxFuncDepth {
		return
	}
	fn, p = r.x.Resolve(fn, p)
	if a, ok := p.(*ssa.Alloc); ok {
		for _, st := range cellStores(a) {
			r.value(st.Fn, st.Val, depth+1)
		}
		return
	}
	if key, _ := r.x.readFrom(p); key != nil && r.once(key) {
		for _, pl := range r.x.funcRecord().into[key] {
			r.pointee(pl.Fn, pl.Val, depth+1)
		}
	}
}

// cellStores lists the values stored into the local variable a: through
// its own address, and through the free variable of each closure that
// captures it (one level of closures).
func cellStores(a *ssa.Alloc) []Placed {
	var out []Placed
	for _, ref := range *a.Referrers() {
		switch ref := ref.(type) {
		case *ssa.Store:
			if ref.Addr == a {
				out = append(out, Placed{a.Parent(), ref.Val})
			}
		case *ssa.MakeClosure:
			fn, _ := ref.Fn.(*ssa.Function)
			for i, b := range ref.Bindings {
				if b != a || fn == nil || i >= len(fn.FreeVars) {
					continue
				}
				for _, fref := range *fn.FreeVars[i].Referrers() {
					if st, ok := fref.(*ssa.Store); ok && st.Addr == fn.FreeVars[i] {
						out = append(out, Placed{fn, st.Val})
					}
				}
			}
		}
	}
	return out
}

// LocalCell reports whether v, a value of fn, is read from a func
// variable of fn (or of the function whose closure fn is) that closures
// capture: what it holds is what cellStores lists (a closure nested in
// such a closure that stores into it is not seen: accepted, as rare).
func (x *Index) LocalCell(fn *ssa.Function, v ssa.Value) bool {
	u, ok := Underlying(v).(*ssa.UnOp)
	if !ok || u.Op != token.MUL || !isFuncPointer(u.X.Type()) {
		return false
	}
	_, cell := x.Resolve(fn, u.X)
	a, ok := cell.(*ssa.Alloc)
	return ok && IsCell(a)
}

// isFuncPointer reports whether t is a pointer to a func type.
func isFuncPointer(t types.Type) bool {
	p, ok := t.Underlying().(*types.Pointer)
	return ok && IsFunc(p.Elem())
}

func (r *funcWalk) once(key any) bool {
	if r.seen[key] {
		return false
	}
	r.seen[key] = true
	return true
}

// param follows a package function's parameter to the arguments of the
// package's calls of it. A closure's parameter is passed by whoever calls
// the closure value: nothing to follow.
func (r *funcWalk) param(p *ssa.Parameter, depth int) {
	fn := p.Parent()
	if fn == nil || fn.Parent() != nil || !r.once(p) {
		return
	}
	for _, a := range r.x.argsOf(p) {
		r.value(a.Fn, a.Val, depth+1)
	}
}

// argsOf lists what the package's static calls of p's function pass
// for p, each with the calling function.
func (x *Index) argsOf(p *ssa.Parameter) []Placed {
	fn := p.Parent()
	i := slices.Index(fn.Params, p)
	var out []Placed
	for _, c := range x.funcRecord().calls[fn] {
		if v := CallArg(c.Common(), i); v != nil {
			out = append(out, Placed{c.Parent(), v})
		}
	}
	return out
}

// CallArg is what call c passes for its callee's parameter i (the
// receiver first): an interface call's receiver is its value.
func CallArg(c *ssa.CallCommon, i int) ssa.Value {
	args := c.Args
	if c.IsInvoke() {
		if i == 0 {
			return c.Value
		}
		i--
	}
	if i < 0 || i >= len(args) {
		return nil
	}
	return args[i]
}

// readFrom returns the field, package var or container a value is read
// from (nil when it is not such a read), and whether it is an element.
func (x *Index) readFrom(v ssa.Value) (any, bool) {
	if c := ContainerOf(v); c != nil {
		return x.containerKey(c, 0), true
	}
	switch u := v.(type) {
	case *ssa.UnOp:
		if u.Op == token.ARROW && !u.CommaOk {
			return x.containerKey(u.X, 0), true
		}
		if u.Op != token.MUL {
			return nil, false
		}
		switch a := u.X.(type) {
		case *ssa.FieldAddr:
			return keyOrNil(lockop.FieldOf(a)), false
		case *ssa.Global:
			return a.Object(), false
		}
	case *ssa.Field:
		return keyOrNil(structField(u.X.Type(), u.Field)), false
	case *ssa.TypeAssert, *ssa.Call:
		if k := atomicLoaded(u); k != nil {
			return k, true
		}
	case *ssa.Extract:
		if k := atomicLoaded(u); k != nil {
			return k, true
		}
		// v, ok := <-ch; for v := range ch (m[k] and a range over m's
		// values: ContainerOf, above)
		if t, ok := u.Tuple.(*ssa.UnOp); ok && t.Op == token.ARROW && u.Index == 0 {
			return x.containerKey(t.X, 0), true
		}
	}
	return nil, false
}

// keyOrNil keeps a nil field an untyped nil key.
func keyOrNil(f *types.Var) any {
	if f == nil {
		return nil
	}
	return f
}

// elem is the key of the elements of what k names, nil when k is.
func elem(k any) any {
	if k == nil {
		return nil
	}
	return elemKey{k}
}

func structField(t types.Type, i int) *types.Var {
	if st, ok := t.Underlying().(*types.Struct); ok && i < st.NumFields() {
		return st.Field(i)
	}
	return nil
}

// maxContainerDepth bounds the moves containerKey follows (a slice grown
// in a loop is its own append's argument).
const maxContainerDepth = 4

// elemKey marks a container key as the elements of what it names, so that
// a slice field's elements and the field itself are kept apart.
type elemKey struct{ of any }

// innerKey names a container kept as an element of outer (the slice of
// subscribers one key of a map holds: `m[k] = append(m[k], ch)`, `for _,
// ch := range m[k]`): the elements of outer's elements, when outer lives
// in a field or package var; nil otherwise.
func (x *Index) innerKey(outer ssa.Value, depth int) any {
	k, ok := x.containerKey(outer, depth+1).(elemKey)
	if _, local := k.of.(ssa.Value); !ok || local {
		return nil
	}
	return elem(k)
}

// containerKey names the container (map, slice or array) v is, by where it
// lives: a field or package var it is read from or stored into, or,
// for a local container, the value itself. A fresh container (a literal,
// make, append's result, the array behind variadic arguments) is named by
// the field or var it ends up in.
func (x *Index) containerKey(v ssa.Value, depth int) any {
	if depth > maxContainerDepth {
		return nil
	}
	v = Underlying(v)
	switch c := v.(type) {
	case *ssa.UnOp:
		if c.Op == token.MUL {
			switch a := c.X.(type) {
			case *ssa.FieldAddr:
				return elem(keyOrNil(lockop.FieldOf(a)))
			case *ssa.Global:
				return elem(a.Object())
			case *ssa.IndexAddr:
				if k := x.innerKey(a.X, depth); k != nil {
					return k
				}
			}
		}
	case *ssa.Lookup:
		if k := x.innerKey(c.X, depth); k != nil {
			return k
		}
	case *ssa.Index:
		if k := x.innerKey(c.X, depth); k != nil {
			return k
		}
	case *ssa.Extract:
		if l, ok := c.Tuple.(*ssa.Lookup); ok && c.Index == 0 {
			if k := x.innerKey(l.X, depth); k != nil {
				return k
			}
		}
	case *ssa.Field:
		return elem(keyOrNil(structField(c.X.Type(), c.Field)))
	case *ssa.FieldAddr: // an array field indexed in place
		return elem(keyOrNil(lockop.FieldOf(c)))
	case *ssa.Global:
		return elem(c.Object())
	case *ssa.Call:
		if b, ok := c.Call.Value.(*ssa.Builtin); ok && b.Name() == "append" && len(c.Call.Args) > 0 {
			if k, ok := x.containerKey(c.Call.Args[0], depth+1).(elemKey); ok {
				if _, local := k.of.(ssa.Value); !local {
					return k
				}
			}
			// A copy, append([]T(nil), s...) or append([]T{}, s...):
			// the elements are s's.
			if len(c.Call.Args) == 2 && emptySlice(c.Call.Args[0]) {
				if k, ok := x.containerKey(c.Call.Args[1], depth+1).(elemKey); ok {
					if _, local := k.of.(ssa.Value); !local {
						return k
					}
				}
			}
		}
		if k := x.returnedContainer(c, depth); k != nil {
			return k
		}
	}
	if v.Referrers() != nil {
		for _, ref := range *v.Referrers() {
			switch r := ref.(type) {
			case *ssa.Store:
				if r.Val != v {
					continue
				}
				switch a := r.Addr.(type) {
				case *ssa.FieldAddr:
					return elem(keyOrNil(lockop.FieldOf(a)))
				case *ssa.Global:
					return elem(a.Object())
				}
			case *ssa.Slice:
				if r.X == v {
					return x.containerKey(r, depth+1)
				}
			case *ssa.MapUpdate:
				if r.Value != v {
					continue
				}
				if k := x.innerKey(r.Map, depth); k != nil {
					return k
				}
			case *ssa.Call:
				if b, ok := r.Call.Value.(*ssa.Builtin); ok && b.Name() == "append" && len(r.Call.Args) == 2 && r.Call.Args[1] == v {
					return x.containerKey(r, depth+1)
				}
			}
		}
	}
	return elem(v)
}

// withPackageInit is the package's source functions and the synthetic
// init that runs its package-level var initializers (`var fsNewFs =
// NewFs`, a map of handlers), whose stores are the vars' values too.
func (x *Index) withPackageInit() []*ssa.Function {
	if len(x.funcs) == 0 || x.funcs[0].Pkg == nil {
		return x.funcs
	}
	init := x.funcs[0].Pkg.Func("init")
	if init == nil || x.funcSet[init] {
		return x.funcs
	}
	return append(x.funcs[:len(x.funcs):len(x.funcs)], init)
}

// returnedContainer names the container a call of one package function
// returns, when every return of it names the same one (`handlers :=
// g.HandlerFuncs(); handlers[path](w, r)`, the map literal HandlerFuncs
// fills): the caller's elements are the ones stored there. nil otherwise.
func (x *Index) returnedContainer(c *ssa.Call, depth int) any {
	callees := x.Callees(c.Common())
	if len(callees) != 1 {
		return nil
	}
	var key any
	for _, res := range ReturnedValues(callees[0]) {
		k := x.containerKey(res, depth+1)
		if k == nil || (key != nil && k != key) {
			return nil
		}
		key = k
	}
	return key
}

// emptySlice reports whether v is a slice known to be empty where it is
// made: nil, or an empty slice literal.
func emptySlice(v ssa.Value) bool {
	if NilConstant(v) {
		return true
	}
	sl, ok := Underlying(v).(*ssa.Slice)
	if !ok || sl.Low != nil || sl.High != nil {
		return false
	}
	a, ok := sl.X.(*ssa.Alloc)
	if !ok {
		return false
	}
	arr, ok := a.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Array)
	return ok && arr.Len() == 0
}
