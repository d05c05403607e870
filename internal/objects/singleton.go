package objects

import (
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A program no other package can use (package main, or a package made
// of _test.go files only) shows every object of its own struct types
// being made. A type it makes at one site, in code that runs once, has
// one object: every pointer to it points to that object, so the lock a
// callback takes on bs.hot is the lock the cache's Add holds, however
// the two were reached (a callback's receiver bound where it was
// registered, a hub's scope behind an accessor).

// ClosedWorld describes a package nothing imports: Pkg is the package,
// whose own types are the ones it sees every object of (another
// package's constructor may make more of its types); Init is its package
// initializer (not a source function, but it makes the package vars'
// objects), RunsOnce says which functions run once by themselves (main,
// init, each Test function) and TypeArg which types are a type argument
// somewhere (a generic function may make them).
type ClosedWorld struct {
	Pkg      *types.Package
	Init     *ssa.Function
	RunsOnce func(*ssa.Function) bool
	TypeArg  func(*types.Named) bool
}

// singletons is the lazily built answer of Singleton.
type singletons struct {
	world *ClosedWorld
	sites map[*types.Named][]token.Pos // allocation sites that run once; NoPos: one that may not
	byVal map[*types.Named]bool        // held by value somewhere: made wherever its holder is
	once  map[*ssa.Function]int8       // runsOnce memo: 1 yes, -1 no, 2 being decided
	refs  map[*ssa.Function][]ssa.Instruction
	// allocs are the program's allocations; valueTypes the types of its
	// values, of what its allocations make (a local of a holder type
	// holds one too), package vars and package-level type declarations.
	allocs     []*ssa.Alloc
	valueTypes []types.Type
	inOne      map[*types.Named]heldIn // heldInOne's answers (Index.inOne)
}

// SetClosedWorld declares the package a closed program (see
// ClosedWorld); without it no type is a singleton.
func (x *Index) SetClosedWorld(w *ClosedWorld) { x.closed = w }

// Singleton reports whether the program has one object of the struct
// type t, and where it is made.
func (x *Index) Singleton(t *types.Named) (token.Pos, bool) {
	if x.closed == nil || t == nil || t.Obj().Pkg() != x.closed.Pkg {
		return token.NoPos, false
	}
	if x.single == nil {
		x.single = x.buildSingletons()
	}
	if x.closed.TypeArg(t) {
		return token.NoPos, false
	}
	sites := x.single.sites[t]
	if len(sites) != 1 || !sites[0].IsValid() || x.single.byVal[t] {
		h := x.inOne(t)
		return h.at, h.ok
	}
	return sites[0], true
}

// heldIn is what heldInOne found for a type: the holder's site and type.
type heldIn struct {
	at     token.Pos
	holder *types.Named
	ok     bool
}

// inOne is heldInOne(t, 0), once per type.
func (x *Index) inOne(t *types.Named) heldIn {
	if h, ok := x.single.inOne[t]; ok {
		return h
	}
	var h heldIn
	h.at, h.holder, h.ok = x.heldInOne(t, 0)
	x.single.inOne[t] = h
	return h
}

// SingletonHolder returns, for a type Singleton reports as having one
// object because it lives in one field of a singleton (heldInOne), the
// outermost such holder, the one object the program makes; nil otherwise.
func (x *Index) SingletonHolder(t *types.Named) *types.Named {
	if _, ok := x.Singleton(t); !ok {
		return nil
	}
	return x.inOne(t).holder
}

// heldInOne reports whether the struct type t, held by value, lives in
// one field of one struct type of the package and nowhere else, that
// holder being a singleton: then t's one object is the holder's field
// (hugo's partialCache, a value field of the one templateFuncster).
// Nowhere else: no allocation of t of its own but composite literals
// copied into a field, no other struct, array, slice, map or channel
// holding t by value.
func (x *Index) heldInOne(t *types.Named, depth int) (token.Pos, *types.Named, bool) {
	if depth > 4 || !x.single.onlyCopiedIn(t) {
		return token.NoPos, nil, false
	}
	var holder *types.Named
	for _, tv := range x.single.valueTypes {
		switch u := tv.(type) {
		case *types.Named:
			st, ok := u.Underlying().(*types.Struct)
			if !ok || u.Origin() == t {
				continue
			}
			for f := range st.Fields() {
				if holdsByValue(f.Type(), t) {
					if holder != nil && holder != u.Origin() || !isNamed(f.Type(), t) {
						return token.NoPos, nil, false
					}
					holder = u.Origin()
				}
			}
		case *types.Array, *types.Slice, *types.Map, *types.Chan, *types.Struct:
			if holdsByValue(u, t) {
				return token.NoPos, nil, false // an element, or an unnamed struct's field
			}
		}
	}
	if holder == nil {
		return token.NoPos, nil, false
	}
	sites := x.single.sites[holder]
	if len(sites) == 1 && sites[0].IsValid() && !x.single.byVal[holder] && !x.closed.TypeArg(holder) {
		return sites[0], holder, true
	}
	return x.heldInOne(holder, depth+1)
}

// isNamed reports whether ft is t itself.
func isNamed(ft types.Type, t *types.Named) bool {
	n, ok := types.Unalias(ft).(*types.Named)
	return ok && n.Origin() == t
}

// holdsByValue reports whether a value of type v holds a t by value.
func holdsByValue(v types.Type, t *types.Named) bool {
	found := map[*types.Named]bool{}
	markByValue(v, found, 0)
	return found[t]
}

// onlyCopiedIn reports whether every allocation of t is a composite
// literal copied into a field as it is made: no object of t of its own.
func (s *singletons) onlyCopiedIn(t *types.Named) bool {
	n := 0
	for _, a := range s.allocs {
		if namedStruct(a.Type()) != t {
			continue
		}
		n++
		if a.Heap {
			return false
		}
		for _, r := range *a.Referrers() {
			switch u := r.(type) {
			case *ssa.FieldAddr, *ssa.Store, *ssa.DebugRef:
			case *ssa.UnOp:
				if u.Op != token.MUL || !onlyStoredToField(u) {
					return false
				}
			default:
				return false
			}
		}
	}
	return len(s.sites[t]) <= n // more sites: a package var of type t
}

// onlyStoredToField reports whether v's one use stores it into a field.
func onlyStoredToField(v ssa.Value) bool {
	refs := *v.Referrers()
	if len(refs) != 1 {
		return false
	}
	st, ok := refs[0].(*ssa.Store)
	if !ok || st.Val != v {
		return false
	}
	_, ok = st.Addr.(*ssa.FieldAddr)
	return ok
}

func (x *Index) buildSingletons() *singletons {
	s := &singletons{world: x.closed, sites: map[*types.Named][]token.Pos{}, byVal: map[*types.Named]bool{}, once: map[*ssa.Function]int8{}, refs: map[*ssa.Function][]ssa.Instruction{}, inOne: map[*types.Named]heldIn{}}
	funcs := x.funcs
	if x.closed.Init != nil {
		funcs = append(funcs[:len(funcs):len(funcs)], x.closed.Init)
	}
	seenType := map[types.Type]bool{}
	noteType := func(t types.Type) {
		if !seenType[t] {
			seenType[t] = true
			s.valueTypes = append(s.valueTypes, types.Unalias(t))
			markByValue(t, s.byVal, 0)
		}
	}
	for _, name := range x.closed.Pkg.Scope().Names() {
		if tn, ok := x.closed.Pkg.Scope().Lookup(name).(*types.TypeName); ok && !seenType[tn.Type()] {
			seenType[tn.Type()] = true // a declaration makes no object
			s.valueTypes = append(s.valueTypes, types.Unalias(tn.Type()))
		}
	}
	var allocs []*ssa.Alloc
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				for _, op := range instr.Operands(nil) {
					if f, ok := (*op).(*ssa.Function); ok {
						s.refs[f] = append(s.refs[f], instr)
					}
					if g, ok := (*op).(*ssa.Global); ok {
						if n := namedStruct(g.Type()); n != nil && g.Pkg != nil && g.Pkg.Pkg == n.Obj().Pkg() {
							s.addSite(n, g.Pos())
						}
						noteType(g.Type().(*types.Pointer).Elem().Underlying())
					}
				}
				if a, ok := instr.(*ssa.Alloc); ok {
					if literalCopy(a) == nil {
						allocs = append(allocs, a)
					}
					// What the object holds by value is made with it.
					markByValue(a.Type().(*types.Pointer).Elem().Underlying(), s.byVal, 0)
				}
				if v, ok := instr.(ssa.Value); ok && !copiesLiteral(v) {
					noteType(v.Type())
				}
			}
		}
	}
	s.allocs = allocs
	for _, a := range allocs {
		s.valueTypes = append(s.valueTypes, a.Type().(*types.Pointer).Elem())
		n := namedStruct(a.Type())
		if n == nil {
			continue
		}
		if a.Block() == nil || OnCycle(a.Block()) || !s.runsOnce(a.Parent()) {
			s.sites[n] = append(s.sites[n], token.NoPos)
			continue
		}
		s.addSite(n, a.Pos())
	}
	return s
}

// addSite records a site of n once per position (a package var is seen
// at each of its uses).
func (s *singletons) addSite(n *types.Named, pos token.Pos) {
	for _, p := range s.sites[n] {
		if p == pos && pos.IsValid() {
			return
		}
	}
	s.sites[n] = append(s.sites[n], pos)
}

// runsOnce reports whether fn runs at most once in the program: it runs
// once by itself, or its one use is a call (or go, or defer) of it, of a
// closure made of it, outside any loop of a function that runs once.
// Methods may be reached through interfaces and method values: never.
func (s *singletons) runsOnce(fn *ssa.Function) bool {
	switch s.once[fn] {
	case 1:
		return true
	case -1, 2:
		return false
	}
	s.once[fn] = 2
	ok := s.decideOnce(fn)
	s.once[fn] = -1
	if ok {
		s.once[fn] = 1
	}
	return ok
}

func (s *singletons) decideOnce(fn *ssa.Function) bool {
	if s.world.RunsOnce(fn) {
		return true
	}
	if fn.Signature.Recv() != nil || fn.TypeParams().Len() > 0 || strings.HasPrefix(fn.Name(), "init#") {
		return false
	}
	refs := s.refs[fn]
	if len(refs) != 1 {
		return false
	}
	site := refs[0]
	if mc, ok := site.(*ssa.MakeClosure); ok {
		uses := mc.Referrers()
		if uses == nil || len(*uses) != 1 {
			return false
		}
		site = (*uses)[0]
		call, ok := site.(ssa.CallInstruction)
		if !ok || call.Common().Value != mc {
			return false
		}
	} else if call, ok := site.(ssa.CallInstruction); !ok || call.Common().Value != fn {
		return false
	}
	return site.Block() != nil && !OnCycle(site.Block()) && s.runsOnce(site.Parent())
}

// namedStruct is the named struct type t points to, nil for others.
func namedStruct(t types.Type) *types.Named {
	p, ok := t.(*types.Pointer)
	if !ok {
		return nil
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	if !ok {
		return nil
	}
	if _, ok := n.Underlying().(*types.Struct); !ok {
		return nil
	}
	return n.Origin()
}

// markByValue marks the named struct types a value of type t holds by
// value (itself, array and slice elements, map values, channel
// elements, struct fields): each such holder made is one more object.
func markByValue(t types.Type, out map[*types.Named]bool, depth int) {
	if depth > 8 {
		return
	}
	switch u := types.Unalias(t).(type) {
	case *types.Named:
		if _, ok := u.Underlying().(*types.Struct); ok {
			if out[u.Origin()] {
				return
			}
			out[u.Origin()] = true
		}
		markByValue(u.Underlying(), out, depth+1)
	case *types.Struct:
		for f := range u.Fields() {
			markByValue(f.Type(), out, depth+1)
		}
	case *types.Array:
		markByValue(u.Elem(), out, depth+1)
	case *types.Slice:
		markByValue(u.Elem(), out, depth+1)
	case *types.Map:
		markByValue(u.Elem(), out, depth+1)
	case *types.Chan:
		markByValue(u.Elem(), out, depth+1)
	case *types.Tuple:
		for v := range u.Variables() {
			markByValue(v.Type(), out, depth+1)
		}
	}
}

// CalledOnce reports whether fn, in a closed program, runs at most once:
// its calls are all known (StaticCalls), and there is one, outside any
// loop of a function that runs once. A method qualifies too, when no
// interface call of the package may run it.
func (x *Index) CalledOnce(fn *ssa.Function) bool {
	if x.closed == nil {
		return false
	}
	if _, ok := x.StaticCalls(fn); !ok {
		return false
	}
	calls := x.CallsOf(fn)
	if len(calls) != 1 || calls[0].Block() == nil || OnCycle(calls[0].Block()) {
		return false
	}
	if x.single == nil {
		x.single = x.buildSingletons()
	}
	return x.single.runsOnce(calls[0].Parent())
}

// literalCopy returns the load of a composite literal's temporary that
// only initializes a variable (`res := LRU{...}`: SSA builds the literal
// in a local, loads it and stores it into res): the literal and its copy
// are one object, res's. nil for any other allocation.
func literalCopy(a *ssa.Alloc) *ssa.UnOp {
	if a.Heap || a.Comment != "complit" {
		return nil
	}
	var load *ssa.UnOp
	for _, r := range *a.Referrers() {
		switch r := r.(type) {
		case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.DebugRef:
		case *ssa.UnOp:
			if load != nil || r.Op != token.MUL {
				return nil
			}
			load = r
		default:
			return nil
		}
	}
	if load == nil || len(*load.Referrers()) != 1 {
		return nil
	}
	if st, ok := (*load.Referrers())[0].(*ssa.Store); !ok || st.Val != load {
		return nil
	} else if _, ok := st.Addr.(*ssa.Alloc); !ok {
		return nil
	}
	return load
}

// copiesLiteral reports whether v is the load literalCopy finds.
func copiesLiteral(v ssa.Value) bool {
	u, ok := v.(*ssa.UnOp)
	if !ok {
		return false
	}
	a, ok := u.X.(*ssa.Alloc)
	return ok && literalCopy(a) == u
}
