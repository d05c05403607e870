package objects

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Origin returns the instruction that created the object v points to, when
// fn created it: a heap allocation of a struct or array, or a call of a
// package function that returns a fresh allocation on every path (a
// constructor). It returns nil for anything else.
func (x *Index) Origin(fn *ssa.Function, v ssa.Value) ssa.Value {
	v = Underlying(v)
	switch o := v.(type) {
	case *ssa.Alloc:
		if o.Heap && !IsCell(o) && o.Parent() == fn {
			return o
		}
	case *ssa.Call:
		if o.Parent() == fn && x.constructor(o.Call.StaticCallee()) {
			return o
		}
	case *ssa.Extract:
		// c, err := NewClient(cfg): the first result of a constructor.
		if call, ok := o.Tuple.(*ssa.Call); ok && o.Index == 0 && call.Parent() == fn && x.constructor(call.Call.StaticCallee()) {
			return o
		}
	}
	return nil
}

// constructor reports whether callee, a function of this package, returns
// a new allocation (its first result) on every path that returns, and
// hands it to no other code before. A nil first result (`return nil,
// err`) is no object, and no other one either.
func (x *Index) constructor(callee *ssa.Function) bool {
	if callee == nil {
		return false
	}
	if o := callee.Origin(); o != nil {
		callee = o
	}
	if !x.funcSet[callee] || len(callee.Blocks) == 0 {
		return false
	}
	n := 0
	for _, b := range callee.Blocks {
		r, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
		if !ok || len(r.Results) == 0 || b == callee.Recover {
			continue
		}
		if c, ok := r.Results[0].(*ssa.Const); ok && c.IsNil() {
			continue
		}
		a, ok := Underlying(r.Results[0]).(*ssa.Alloc)
		if !ok || IsCell(a) || !a.Heap || len(x.publications(a)) > 0 {
			return false // not new, or already handed to other code
		}
		n++
	}
	return n > 0
}

// Private reports whether the object created by origin (see Origin) is
// still private at instruction at of the same function: no publication of
// it can have run since origin last executed. Per allocation: a path from
// a publication back to at that executes origin again reaches a new
// object, so an object made afresh in every loop iteration and published
// at the end of one is private again in the next.
func (x *Index) Private(origin ssa.Value, at ssa.Instruction) bool {
	return x.PrivateUnless(origin, at, nil)
}

// PrivateUnless is Private, not counting the publications for which
// harmless says so (a store into a guarded container under a lock the
// caller knows is still held).
func (x *Index) PrivateUnless(origin ssa.Value, at ssa.Instruction, harmless func(ssa.Instruction) bool) bool {
	oi, ok := origin.(ssa.Instruction)
	if !ok || at == nil || oi.Parent() != at.Parent() {
		return false
	}
	for _, pub := range x.publications(origin) {
		// The publishing instruction itself sees the object shared: a
		// call handing it over runs with it visible to others.
		if (pub == at || reachesAvoiding(pub, at, oi) && !exclusive(pub, at)) && (harmless == nil || !harmless(pub)) {
			return false
		}
	}
	return true
}

// publications returns the instructions that hand the object to other
// code: a go statement, a send, a map update, a store into memory that is
// not a local variable or a field of another private object of the
// function (whose publications then count), a call handing a closure over
// it to a goroutine, and a call of a function that lets the argument
// escape (see escapes).
func (x *Index) publications(origin ssa.Value) []ssa.Instruction {
	if pubs, ok := x.pubs[origin]; ok {
		return pubs
	}
	x.pubs[origin] = nil // a cycle through containers publishes nothing more
	fn := origin.Parent()
	var pubs []ssa.Instruction
	derived := map[ssa.Value]bool{origin: true}
	work := []ssa.Value{origin}
	add := func(v ssa.Value) {
		if !derived[v] {
			derived[v] = true
			work = append(work, v)
		}
	}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		refs := v.Referrers()
		if refs == nil {
			continue
		}
		for _, r := range *refs {
			switch u := r.(type) {
			case *ssa.ChangeType, *ssa.MakeInterface, *ssa.ChangeInterface, *ssa.TypeAssert,
				*ssa.Phi, *ssa.FieldAddr, *ssa.IndexAddr, *ssa.Slice, *ssa.Convert:
				add(u.(ssa.Value))
			case *ssa.UnOp:
				if a, ok := v.(*ssa.Alloc); ok && IsCell(a) {
					add(u) // a load of a variable holding it
				}
			case *ssa.MakeClosure:
				add(u)
			case *ssa.Store:
				if u.Val != v {
					continue // a store into it: construction
				}
				pubs = append(pubs, x.storePublications(fn, u, add)...)
			case *ssa.Go, *ssa.Send, *ssa.MapUpdate:
				pubs = append(pubs, r)
			case *ssa.Defer:
				pubs = append(pubs, x.callPublications(fn, r, &u.Call, v)...)
			case *ssa.Call:
				if p := x.callPublications(fn, r, &u.Call, v); len(p) > 0 {
					pubs = append(pubs, p...)
				} else if u.Call.Signature().Results().Len() > 0 && pointerLike(u.Type()) {
					add(u) // the result may hold it
				}
			case *ssa.Return:
				// Handed out: nothing of this function runs afterwards.
			}
		}
	}
	x.pubs[origin] = pubs
	return pubs
}

// storePublications classifies storing a derived value: into a local
// variable's cell (the cell then derives), into a field of another object
// the function created (that object's publications count), or anywhere
// else (a publication).
func (x *Index) storePublications(fn *ssa.Function, st *ssa.Store, add func(ssa.Value)) []ssa.Instruction {
	if cell, ok := st.Addr.(*ssa.Alloc); ok && IsCell(cell) {
		add(cell)
		return nil
	}
	return x.storeInto(fn, st, containerOf(st.Addr))
}

// storeInto classifies instruction at storing a value into the memory of
// container (nil: unknown memory): a fresh object's (its publications
// count), a parameter's (a publication ParamFlow reads as "into that
// parameter"), anything else (a publication).
func (x *Index) storeInto(fn *ssa.Function, at ssa.Instruction, container ssa.Value) []ssa.Instruction {
	j := FlowEscapes
	if container != nil {
		if o := x.Origin(fn, container); o != nil {
			return x.publications(o)
		}
		j = paramIndex(fn, Underlying(container))
	}
	x.markInto(at, max(j, FlowEscapes))
	return []ssa.Instruction{at}
}

// containerOf returns the object whose memory addr points into (through
// fields and array elements, not through pointers), or nil.
func containerOf(addr ssa.Value) ssa.Value {
	for range maxSteps {
		switch a := addr.(type) {
		case *ssa.FieldAddr:
			addr = a.X
		case *ssa.IndexAddr:
			if isSlice(a.X.Type()) {
				return nil
			}
			addr = a.X
		default:
			return Underlying(addr)
		}
	}
	return nil
}

// callPublications returns the publications of v by call (instruction
// at): a closure over it given to an asynchronous API, an argument the
// callee lets escape (a package function's ParamFlow, another package's
// ParamFlows fact; without one it is assumed to keep it, except for
// methods of the object's own fields (c.mu.Lock(), c.buf.Write(p)) and the
// standard library's functions that only read their arguments), or the
// publications of storing it into another argument's memory when that is
// all the callee does with it (`e.ops.InitHandler(e)`).
func (x *Index) callPublications(fn *ssa.Function, at ssa.Instruction, call *ssa.CallCommon, v ssa.Value) []ssa.Instruction {
	flow := x.callFlow(call, v)
	switch {
	case flow == FlowStays:
		return nil
	case flow >= 0 && flow < len(call.Args):
		return x.storeInto(fn, at, containerOf(call.Args[flow]))
	}
	x.markInto(at, FlowEscapes) // whatever else the call does with other arguments
	return []ssa.Instruction{at}
}

// callFlow is what call does with v, one of its arguments or its callee
// (see ParamFlow; flows index call.Args).
func (x *Index) callFlow(call *ssa.CallCommon, v ssa.Value) int {
	if mc, ok := v.(*ssa.MakeClosure); ok {
		if fn, ok := mc.Fn.(*ssa.Function); ok && x.startsGoroutine(fn) {
			return FlowEscapes
		}
	}
	if call.IsInvoke() {
		if call.Value == v || argIndex(call.Args, v) >= 0 {
			return FlowEscapes
		}
		return FlowStays
	}
	callee := call.StaticCallee()
	if callee == nil {
		if call.Value != v {
			return FlowEscapes // passing it to an unknown func is publishing
		}
		return FlowStays // calling it is no publication
	}
	if o := callee.Origin(); o != nil {
		callee = o
	}
	i := argIndex(call.Args, v)
	if i < 0 {
		return FlowStays // v is the callee (a closure called in place)
	}
	if x.funcSet[callee] {
		if m := boundTarget(callee); m != nil {
			return boolFlow(x.Escapes(m, i))
		}
		return x.ParamFlow(callee, i)
	}
	if _, isField := v.(*ssa.FieldAddr); isField && i == 0 && callee.Signature.Recv() != nil {
		return FlowStays // a method of one of the object's own fields
	}
	if readOnly(callee) {
		return FlowStays
	}
	return x.importedFlow(callee, i)
}

func boolFlow(escapes bool) int {
	if escapes {
		return FlowEscapes
	}
	return FlowStays
}

func argIndex(args []ssa.Value, v ssa.Value) int {
	for i, a := range args {
		if a == v {
			return i
		}
	}
	return -1
}

// boundTarget returns the method a method-value wrapper calls, or nil.
func boundTarget(fn *ssa.Function) *ssa.Function {
	if fn.Synthetic == "" {
		return nil
	}
	if obj, ok := fn.Object().(*types.Func); ok {
		if m := fn.Prog.FuncValue(obj.Origin()); m != nil && m != fn {
			return m
		}
	}
	return nil
}

// readOnlyPkgs are standard packages whose functions read their arguments
// and keep none (formatting, conversion, sorting, encoding).
var readOnlyPkgs = map[string]bool{
	"fmt": true, "log": true, "log/slog": true, "errors": true, "strings": true, "strconv": true,
	"bytes": true, "sort": true, "slices": true, "maps": true, "encoding/json": true,
	"encoding/binary": true, "sync/atomic": true, "testing": true, "reflect": true,
	"unicode/utf8": true, "math": true, "math/bits": true,
}

func readOnly(fn *ssa.Function) bool {
	return fn.Pkg != nil && readOnlyPkgs[fn.Pkg.Pkg.Path()]
}

func pointerLike(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface, *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Struct, *types.Tuple:
		return true
	}
	return false
}

// Reaches reports whether control can flow from instruction from to
// instruction to of the same function without executing avoid again:
// with avoid the instruction defining a value, whether a use at to can
// see the value from's execution saw (not one of a later loop
// iteration). avoid may be from itself.
func Reaches(from, to, avoid ssa.Instruction) bool { return reachesAvoiding(from, to, avoid) }

// reachesAvoiding reports whether control can flow from instruction from
// to instruction to without executing avoid again (avoid dominates both).
func reachesAvoiding(from, to, avoid ssa.Instruction) bool {
	fb, tb, ab := from.Block(), to.Block(), avoid.Block()
	if fb == nil || tb == nil || ab == nil {
		return true
	}
	if fb == tb && InstrIndex(fb, from) < InstrIndex(tb, to) {
		return true
	}
	if fb == ab && InstrIndex(fb, from) < InstrIndex(fb, avoid) {
		return false // the block goes on to allocate anew before leaving
	}
	if tb == ab && InstrIndex(tb, to) >= InstrIndex(tb, avoid) {
		return false // every way into to's block executes avoid first
	}
	// Every path on through avoid's block executes avoid: a new object.
	return BlockReaches(fb.Succs, tb, func(b *ssa.BasicBlock) bool { return b == ab && b != tb })
}

// InstrIndex returns instr's index in b, or -1.
func InstrIndex(b *ssa.BasicBlock, instr ssa.Instruction) int {
	for i, x := range b.Instrs {
		if x == instr {
			return i
		}
	}
	return -1
}

// exclusive reports whether no run of the function executes both a and b:
// they lie on opposite sides of branches on one condition value computed
// once per call (outside any loop), as a publication on the inbound
// branch of `if solicit` and a lock taken under a later `if solicit`.
func exclusive(a, b ssa.Instruction) bool {
	for _, ga := range branchGuards(a.Block()) {
		for _, gb := range branchGuards(b.Block()) {
			if ga.cond == gb.cond && ga.taken != gb.taken && !inLoop(ga.cond) {
				return true
			}
		}
	}
	return false
}

// guard is a branch outcome every path to a block has taken.
type guard struct {
	cond  ssa.Value
	taken bool
}

// branchGuards lists the outcomes of the If instructions whose edge
// dominates b: b, or a dominator of it, is a successor entered only from
// that If.
func branchGuards(b *ssa.BasicBlock) []guard {
	var out []guard
	for d := b; d != nil; d = d.Idom() {
		if len(d.Preds) != 1 {
			continue
		}
		p := d.Preds[0]
		ifi, ok := p.Instrs[len(p.Instrs)-1].(*ssa.If)
		if !ok || p.Succs[0] == p.Succs[1] {
			continue
		}
		cond, taken := ifi.Cond, d == p.Succs[0]
		for {
			u, ok := cond.(*ssa.UnOp)
			if !ok || u.Op != token.NOT {
				break
			}
			cond, taken = u.X, !taken
		}
		out = append(out, guard{cond, taken})
	}
	return out
}

// inLoop reports whether v may take another value within one call: it is
// computed in a block on a cycle.
func inLoop(v ssa.Value) bool {
	instr, ok := v.(ssa.Instruction)
	if !ok || instr.Block() == nil {
		return false // a parameter, constant or free variable
	}
	return OnCycle(instr.Block())
}

// OnCycle reports whether b can reach itself.
func OnCycle(b *ssa.BasicBlock) bool {
	return BlockReaches(b.Succs, b, nil)
}
