package locks

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// hasLockWork reports whether the package has anything for the engine: a
// lock operation, a lock directive, or a call to another package's
// function whose summary has a lock effect.
func (e *engine) hasLockWork() bool {
	if e.p.Directives != nil && len(e.p.Directives.Objects) > 0 {
		return true
	}
	for _, fn := range e.p.Funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if fa, ok := instr.(*ssa.FieldAddr); ok {
					if v := lockop.FieldOf(fa); v != nil && v.Pkg() != e.p.Pass.Pkg && e.guardOf(v) != nil {
						return true // an imported guarded or atomic field
					}
				}
				if mi, ok := instr.(*ssa.MakeInterface); ok && e.handsToDispatcher(mi) {
					return true // runs another package's calls under its locks
				}
				ci, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				if op, _ := e.classify(ci.Common()); op != lockop.None {
					return true
				}
				if callee := ci.Common().StaticCallee(); callee != nil && callee.Pkg != nil && callee.Pkg.Pkg != e.p.Pass.Pkg {
					if e.importedSummary(callee) != nil || e.p.FuncDecl(callee) != nil {
						return true // a lock effect, or a declared contract
					}
				}
			}
		}
	}
	return false
}

// calleesOf lists the package functions fn may call, for ordering.
func (e *engine) calleesOf(fn *ssa.Function) []*ssa.Function {
	return e.callees(fn, true)
}

// callees is calleesOf, without the functions fn starts as goroutines
// when withGo is false.
func (e *engine) callees(fn *ssa.Function, withGo bool) []*ssa.Function {
	var out []*ssa.Function
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			out = e.appendCallees(out, fn, instr, withGo)
		}
	}
	return out
}

// appendCallees appends the package functions instr (of fn) may call.
func (e *engine) appendCallees(out []*ssa.Function, fn *ssa.Function, instr ssa.Instruction, withGo bool) []*ssa.Function {
	add := func(f *ssa.Function) {
		if f == nil {
			return
		}
		if m := e.boundMethod(f); m != nil {
			f = m
		}
		f = e.canonical(f)
		if e.p.FuncSet[f] {
			out = append(out, f)
		}
	}
	switch in := instr.(type) {
	case *ssa.MakeClosure:
		add(in.Fn.(*ssa.Function))
	case ssa.CallInstruction:
		if _, ok := in.(*ssa.Go); ok && !withGo {
			return out
		}
		c := in.Common()
		if c.IsInvoke() {
			add(e.devirtualize(c))
			impls := e.implementations(c)
			if len(impls) == 0 {
				// Another package's interface (io.Writer), resolved to
				// the types the package stores or passes for it, as
				// invokeTargets does: the callee is summarized first.
				impls = e.passedImplementations(c, e.storedImplementations(c, nil))
			}
			for _, m := range impls {
				add(m)
			}
			return out
		}
		if callee := c.StaticCallee(); callee != nil {
			add(callee)
			for _, t := range e.formatted(c.Args, []target{{fn: callee, exact: true}})[1:] {
				add(t.fn)
			}
		} else if !isParamValue(c.Value) {
			for _, f := range e.funcsOf(fn, c.Value) {
				add(f)
			}
		}
		for _, a := range c.Args {
			if f, ok := a.(*ssa.Function); ok {
				add(f) // a function passed to be called (paramCall)
			}
			if sl, ok := a.Type().Underlying().(*types.Slice); ok && objects.IsFunc(sl.Elem()) {
				for _, el := range sliceElems(a) { // functions passed in a slice (paramelems.go)
					for _, f := range e.funcsOf(fn, el) {
						add(f)
					}
				}
			}
		}
	}
	return out
}

// isParamValue reports whether a called value is a parameter or captured
// variable: its callers know the function (paramCall), and following it
// to every caller's argument would only merge components.
func isParamValue(v ssa.Value) bool {
	switch objects.Underlying(v).(type) {
	case *ssa.Parameter, *ssa.FreeVar:
		return true
	}
	return false
}

// sccs returns the strongly connected components of the package's call
// graph, callees first (Tarjan), deterministically from source order.
func (e *engine) sccs() [][]*ssa.Function {
	index := map[*ssa.Function]int{}
	low := map[*ssa.Function]int{}
	onStack := map[*ssa.Function]bool{}
	var stack []*ssa.Function
	var out [][]*ssa.Function
	var visit func(fn *ssa.Function)
	visit = func(fn *ssa.Function) {
		index[fn], low[fn] = len(index), len(index)
		stack = append(stack, fn)
		onStack[fn] = true
		for _, c := range e.calleesOf(fn) {
			if _, seen := index[c]; !seen {
				visit(c)
				low[fn] = min(low[fn], low[c])
			} else if onStack[c] {
				low[fn] = min(low[fn], index[c])
			}
		}
		if low[fn] == index[fn] {
			var scc []*ssa.Function
			for {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[top] = false
				scc = append(scc, top)
				if top == fn {
					break
				}
			}
			out = append(out, scc)
		}
	}
	for _, fn := range e.p.Funcs {
		if _, seen := index[fn]; !seen {
			visit(fn)
		}
	}
	return out
}

func (e *engine) selfRecursive(fn *ssa.Function) bool {
	for _, c := range e.calleesOf(fn) {
		if c == fn {
			return true
		}
	}
	return false
}

// implementations returns the package's methods an interface call can
// run: those of its named types implementing the interface of the call's
// value. That is not always the interface declaring the method: a call
// through an Indexer of the List it embeds from Store runs the List of an
// Indexer, never that of a type that is only a Store.
func (e *engine) implementations(call *ssa.CallCommon) []*ssa.Function {
	return e.implementationsOf(call.Value.Type(), call.Method)
}

// implementationsOf is implementations for method m called on a value of
// interface type recv. A type that has m from an embedded interface field
// (go-ethereum's freezerdb{KeyValueStore; AncientStore}) runs what that
// interface's implementations run.
func (e *engine) implementationsOf(recv types.Type, m *types.Func) []*ssa.Function {
	iface, ok := recv.Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	key := implKey{recv, m}
	if out, ok := e.impls[key]; ok {
		return out
	}
	// Only interfaces the package declares: resolving io.Writer and
	// friends to every implementation in a large package (net/http)
	// invents call chains no program takes.
	if m.Pkg() != e.p.Pass.Pkg {
		e.impls[key] = nil
		return nil
	}
	var out []*ssa.Function
	e.impls[key] = nil // while in progress: an interface embedded in an implementation of itself
	defer func() { e.impls[key] = out }()
	reach := e.convertedTo(recv)
	exported := false
	if n, ok := types.Unalias(recv).(*types.Named); ok {
		exported = n.Obj().Exported()
	}
	for _, n := range e.p.TypesWithMethod(m.Name()) {
		ptr := types.NewPointer(n)
		if !types.Implements(ptr, iface) {
			continue
		}
		// A type satisfying the interface by accident (crypto/tls's Conn
		// has the Write of its transcriptHash) is no candidate: the
		// package must convert it to the interface (or to one that flows
		// into it), unless both are exported and users may convert it.
		if !reach[n] && !(exported && n.Obj().Exported()) {
			continue
		}
		obj, index, _ := types.LookupFieldOrMethod(ptr, false, e.p.Pass.Pkg, m.Name())
		mf, ok := obj.(*types.Func)
		if !ok || mf.Pkg() != e.p.Pass.Pkg {
			continue
		}
		if f := e.p.SSA.Pkg.Prog.FuncValue(mf); f != nil && e.p.FuncSet[f] {
			// A method promoted from an embedded struct counts once per
			// type: its receiver is another object for each.
			out = append(out, f)
			continue
		}
		// From an embedded interface field: what the values stored there
		// run, when not a candidate already (the one freezer of a
		// freezerdb).
		for _, g := range e.embeddedImplementations(n, index, recv, mf) {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	if len(out) > maxImpls {
		out = nil // too many candidates to say anything useful
	}
	return out
}

// embeddedImplementations resolves method m that type n has from an
// interface field it embeds directly (index, as types.LookupFieldOrMethod
// gives it, is that field's and the method's): the implementations of the
// field's interface, only of the types stored into the field when those
// are known. Not the interface the method is declared in (TxnRead's Rev
// comes from ReadView, whose readView is never a transaction), nor the
// call's own interface again.
func (e *engine) embeddedImplementations(n *types.Named, index []int, recv types.Type, m *types.Func) []*ssa.Function {
	st, ok := n.Underlying().(*types.Struct)
	if !ok || len(index) != 2 || index[0] >= st.NumFields() {
		return nil
	}
	fld := st.Field(index[0])
	if !fld.Embedded() || !types.IsInterface(fld.Type()) || types.Identical(fld.Type(), recv) {
		return nil
	}
	return e.storedIn(fld, e.implementationsOf(fld.Type(), m))
}

// implKey is an interface call's static receiver type and method.
type implKey struct {
	recv types.Type
	m    *types.Func
}

// maxImpls bounds interface-call resolution.
const maxImpls = 8

// convertedTo returns the package's named types whose values (or
// pointers) the package converts to iface: directly, or to an interface
// whose values the package then converts or asserts to iface (checked
// by type identity, one scan of the package, cached per interface).
func (e *engine) convertedTo(iface types.Type) map[*types.Named]bool {
	if e.convs == nil {
		e.scanConversions()
		e.convCache = map[types.Type]map[*types.Named]bool{}
	}
	if out, ok := e.convCache[iface]; ok {
		return out
	}
	// Interfaces whose values reach iface, by a backwards closure over
	// the interface-to-interface conversions.
	reach := []types.Type{iface}
	for i := 0; i < len(reach) && i < 64; i++ {
		for _, c := range e.ifaceConvs {
			if types.Identical(c[1], reach[i]) && !slices.ContainsFunc(reach, func(t types.Type) bool { return types.Identical(t, c[0]) }) {
				reach = append(reach, c[0])
			}
		}
	}
	out := map[*types.Named]bool{}
	for _, c := range e.convs {
		if slices.ContainsFunc(reach, func(t types.Type) bool { return types.Identical(t, c.to) }) {
			out[c.from] = true
		}
	}
	e.convCache[iface] = out
	return out
}

// conversion is a MakeInterface of a named type (or a pointer to one).
type conversion struct {
	from *types.Named
	to   types.Type
	pos  token.Pos // where, when known
	// asserted: only declared (`var _ I = (*T)(nil)`), not made.
	asserted bool
}

// scanConversions records the package's MakeInterface instructions of
// named types and its interface-to-interface conversions and assertions.
func (e *engine) scanConversions() {
	e.convs = []conversion{}
	addIface := func(from, to types.Type) {
		if !types.IsInterface(from) || !types.IsInterface(to) || types.Identical(from, to) {
			return
		}
		for _, c := range e.ifaceConvs {
			if types.Identical(c[0], from) && types.Identical(c[1], to) {
				return
			}
		}
		e.ifaceConvs = append(e.ifaceConvs, [2]types.Type{from, to})
	}
	// The package initializer too: package vars' conversions, and the
	// `var _ Iface = (*T)(nil)` that declares T one.
	funcs := e.p.Funcs
	if init := e.p.SSA.Pkg.Func("init"); init != nil {
		funcs = append(funcs[:len(funcs):len(funcs)], init)
	}
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				switch x := instr.(type) {
				case *ssa.MakeInterface:
					e.addConversion(x.X.Type(), x.Type(), conversionPos(x), false)
				case *ssa.ChangeInterface:
					addIface(x.X.Type(), x.Type())
				case *ssa.TypeAssert:
					addIface(x.X.Type(), x.AssertedType)
				}
			}
		}
	}
	e.scanAssertions()
}

// addConversion records a conversion of a value of type from (a named
// type or a pointer to one) to the interface to.
func (e *engine) addConversion(from, to types.Type, pos token.Pos, asserted bool) {
	if p, ok := from.(*types.Pointer); ok {
		from = p.Elem()
	}
	if n, ok := types.Unalias(from).(*types.Named); ok && !types.IsInterface(n) {
		if o := n.Origin(); o != nil {
			n = o
		}
		e.convs = append(e.convs, conversion{from: n, to: to, pos: pos, asserted: asserted})
	}
}

// scanAssertions records `var _ Iface = (*T)(nil)` declarations: they
// compile to nothing, yet say that T is meant as an Iface.
func (e *engine) scanAssertions() {
	info := e.p.Pass.TypesInfo
	for _, f := range e.p.Pass.Files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok || vs.Type == nil {
					continue
				}
				to := info.TypeOf(vs.Type)
				if to == nil || !types.IsInterface(to) {
					continue
				}
				for i, name := range vs.Names {
					if name.Name == "_" && i < len(vs.Values) {
						if from := info.TypeOf(vs.Values[i]); from != nil {
							e.addConversion(from, to, name.Pos(), true)
						}
					}
				}
			}
		}
	}
}

// conversionPos is where a MakeInterface happens: its own position, or,
// for an implicit conversion (an argument, a store), its first user's.
func conversionPos(x *ssa.MakeInterface) token.Pos {
	if x.Pos().IsValid() {
		return x.Pos()
	}
	if refs := x.Referrers(); refs != nil {
		for _, r := range *refs {
			if r.Pos().IsValid() {
				return r.Pos()
			}
		}
	}
	return x.Parent().Pos()
}
