package objects

import (
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// One type in two roles: a Store used as a node's private log (Node.wal)
// and as a table's data (Table.data) is one lock class, so edges through
// the two fields would join into cycles no program runs. A package-wide
// record of what is stored into each pointer field tells them apart: two
// fields can hold the same object only if some origin reaches both (the
// same allocation, parameter or package var, or a value read from one
// field and stored into the other). Fields whose stores the record cannot
// follow (a value from another package's call, a map or slice element, an
// interface) can hold anything.

// Via returns the refinement of the object v points to by how it was
// reached: the value struct field it is (v = &x.f, f a struct: "pkg.T.f"),
// or the pointer field it was loaded from (v = x.F) as the key of F's
// alias group ("ptr:pkg.T.F", shared by the fields that can hold the same
// object); "" when unknown.
func (x *Index) Via(v ssa.Value) string {
	for range maxSteps {
		switch c := v.(type) {
		case *ssa.ChangeType:
			v = c.X
			continue
		case *ssa.MakeInterface:
			v = c.X
			continue
		case *ssa.FieldAddr:
			if f := lockop.FieldOf(c); f != nil {
				if _, isStruct := f.Type().Underlying().(*types.Struct); isStruct {
					return lockop.ClassKey(f)
				}
			}
			return ""
		case *ssa.UnOp:
			if fa, ok := c.X.(*ssa.FieldAddr); ok && c.Op == token.MUL {
				return x.fieldGroup(lockop.FieldOf(fa))
			}
			if cell, ok := c.X.(*ssa.Alloc); ok && c.Op == token.MUL && IsCell(cell) {
				if stored := StoredOnce(cell); stored != nil { // a captured variable
					v = stored
					continue
				}
			}
		case *ssa.Call:
			if r := throughGetter(c); r != nil {
				v = r
				continue
			}
		}
		return ""
	}
	return ""
}

// fieldOrigins is the package-wide record of pointer-field stores.
type fieldOrigins struct {
	stores  map[*types.Var][]*ssa.Store // the package's stores into each field
	calls   map[*ssa.Function][]*ssa.CallCommon
	origins map[*types.Var]map[string]bool // memo; nil entry while computing
	group   map[*types.Var]string          // built by groups
	values  map[*ssa.Function]bool         // functions used as values, not only called
	// invoked: method names interface calls use, and names of methods
	// taken as values (a bound method, a method expression).
	invoked map[string]bool
	dynamic map[*types.Var]fieldTypes // memo of FieldTypes
	// siblings: stores of one field into another of the same object, by
	// position; built on the first SiblingCopy.
	siblings []siblingCopy
}

// fieldTypes is a FieldTypes answer.
type fieldTypes struct {
	types []types.Type
	ok    bool
}

const anything = "?"

// fieldGroup returns f's alias group, "" when f can hold anything (or is
// not a pointer field of this package stored into here).
func (x *Index) fieldGroup(f *types.Var) string {
	if f == nil {
		return ""
	}
	fo := x.fieldRecord()
	if fo.group == nil {
		x.groups()
	}
	return fo.group[f]
}

// groups joins the pointer fields that can hold the same object (an
// origin in common) into groups named after their smallest class key.
func (x *Index) groups() {
	fo := x.fieldRecord()
	fo.group = map[*types.Var]string{}
	var fields []*types.Var
	for f := range fo.stores {
		if _, isPtr := f.Type().Underlying().(*types.Pointer); isPtr && x.ownField(f) {
			fields = append(fields, f)
		}
	}
	slices.SortFunc(fields, func(a, b *types.Var) int { return strings.Compare(lockop.ClassKey(a), lockop.ClassKey(b)) })
	parent := map[*types.Var]*types.Var{}
	var find func(f *types.Var) *types.Var
	find = func(f *types.Var) *types.Var {
		if p := parent[f]; p != nil && p != f {
			parent[f] = find(p)
			return parent[f]
		}
		return f
	}
	byOrigin := map[string]*types.Var{}
	for _, f := range fields {
		parent[f] = f
		origins := x.originsOf(f)
		if origins[anything] {
			continue
		}
		for o := range origins {
			if g, ok := byOrigin[o]; ok {
				a, b := find(f), find(g)
				if lockop.ClassKey(b) < lockop.ClassKey(a) {
					a, b = b, a
				}
				parent[b] = a
			} else {
				byOrigin[o] = f
			}
		}
	}
	for _, f := range fields {
		if !x.originsOf(f)[anything] {
			fo.group[f] = "ptr:" + lockop.ClassKey(find(f))
		}
	}
}

func (x *Index) ownField(f *types.Var) bool {
	for _, fn := range x.funcs {
		if fn.Pkg != nil {
			return f.Pkg() == fn.Pkg.Pkg
		}
	}
	return false
}

func intersects(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

// fieldRecord scans the package once: every store into a field, and every
// call of a package function (to follow parameters to arguments).
func (x *Index) fieldRecord() *fieldOrigins {
	if x.fields != nil {
		return x.fields
	}
	fo := &fieldOrigins{stores: map[*types.Var][]*ssa.Store{}, calls: map[*ssa.Function][]*ssa.CallCommon{},
		origins: map[*types.Var]map[string]bool{}, values: map[*ssa.Function]bool{}, dynamic: map[*types.Var]fieldTypes{}, invoked: map[string]bool{}}
	var ops []*ssa.Value
	for _, fn := range x.funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				ops = instr.Operands(ops[:0])
				for i, op := range ops {
					if f, ok := (*op).(*ssa.Function); ok {
						if c, call := instr.(ssa.CallInstruction); !call || i != 0 || c.Common().Value != f {
							fo.values[f] = true
						}
						if f.Synthetic != "" && f.Object() != nil {
							fo.invoked[f.Object().Name()] = true
						}
					}
				}
				if c, ok := instr.(ssa.CallInstruction); ok && c.Common().IsInvoke() {
					fo.invoked[c.Common().Method.Name()] = true
				}
				switch in := instr.(type) {
				case *ssa.Store:
					if fa, ok := in.Addr.(*ssa.FieldAddr); ok {
						if f := lockop.FieldOf(fa); f != nil {
							fo.stores[f] = append(fo.stores[f], in)
						}
					}
				case ssa.CallInstruction:
					if callee := in.Common().StaticCallee(); callee != nil && x.funcSet[callee] {
						fo.calls[callee] = append(fo.calls[callee], in.Common())
					}
				}
			}
		}
	}
	x.fields = fo
	return fo
}

// originsOf returns where the objects stored into f come from.
func (x *Index) originsOf(f *types.Var) map[string]bool {
	fo := x.fieldRecord()
	if o, ok := fo.origins[f]; ok {
		if o == nil {
			return map[string]bool{} // a cycle of fields: what the others add
		}
		return o
	}
	fo.origins[f] = nil
	out := map[string]bool{"field:" + lockop.ClassKey(f): true}
	for _, st := range fo.stores[f] {
		x.valueOrigins(st.Val, out, 0)
	}
	fo.origins[f] = out
	return out
}

// maxOriginDepth bounds the walk through parameters and calls.
const maxOriginDepth = 6

// valueOrigins adds the origins of v to out.
func (x *Index) valueOrigins(v ssa.Value, out map[string]bool, depth int) {
	if depth > maxOriginDepth {
		out[anything] = true
		return
	}
	v = Underlying(v)
	switch o := v.(type) {
	case *ssa.Const:
		// nil: no object
	case *ssa.Alloc:
		out["new:"+posKey(o.Parent(), o.Pos())] = true
	case *ssa.Global:
		out["global:"+o.RelString(nil)] = true
	case *ssa.UnOp:
		if fa, ok := o.X.(*ssa.FieldAddr); ok && o.Op == token.MUL {
			if g := lockop.FieldOf(fa); g != nil && x.ownField(g) {
				for k := range x.originsOf(g) {
					out[k] = true
				}
				out["field:"+lockop.ClassKey(g)] = true
				return
			}
		}
		if g, ok := o.X.(*ssa.Global); ok && o.Op == token.MUL {
			out["global:"+g.RelString(nil)] = true
			return
		}
		out[anything] = true
	case *ssa.Phi:
		for _, e := range o.Edges {
			if e != o {
				x.valueOrigins(e, out, depth+1)
			}
		}
	case *ssa.Parameter:
		x.paramOrigins(o, out, depth)
	case *ssa.Call:
		callee := o.Call.StaticCallee()
		if callee == nil || !x.funcSet[callee] {
			out[anything] = true
			return
		}
		if x.constructor(callee) {
			out["new:"+posKey(o.Parent(), o.Pos())] = true
			return
		}
		for _, b := range callee.Blocks {
			if r, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && len(r.Results) > 0 {
				x.valueOrigins(r.Results[0], out, depth+1)
			}
		}
	default:
		out[anything] = true
	}
}

// paramOrigins adds the arguments passed for p at the package's calls,
// and, when the function can be called from elsewhere, p itself.
func (x *Index) paramOrigins(p *ssa.Parameter, out map[string]bool, depth int) {
	fn := p.Parent()
	i := slices.Index(fn.Params, p)
	if fn.Parent() != nil || fn.Object() == nil {
		out[anything] = true // a closure's parameter: called through values
		return
	}
	// Callers elsewhere, or through a func value, pass what we cannot see:
	// the parameter itself is an origin.
	out["param:"+fn.RelString(nil)+"#"+strconv.Itoa(i)] = true
	for _, c := range x.fieldRecord().calls[fn] {
		if i < len(c.Args) {
			x.valueOrigins(c.Args[i], out, depth+1)
		}
	}
}

func posKey(fn *ssa.Function, pos token.Pos) string {
	return fn.RelString(nil) + "@" + strconv.Itoa(int(pos))
}

// Copied reports whether the package stores a value read from a field of
// group sub ("ptr:...", see Via) into a field of the same group: a
// back-pointer handed from object to object (child.tree = parent.tree),
// so that the group's fields of different objects commonly hold the same
// object. pos is such a store.
func (x *Index) Copied(sub string) (pos token.Pos, copied bool) {
	if !strings.HasPrefix(sub, "ptr:") {
		return token.NoPos, false
	}
	fo := x.fieldRecord()
	if fo.group == nil {
		x.groups()
	}
	for f, vals := range fo.stores {
		if fo.group[f] != sub {
			continue
		}
		for _, st := range vals {
			u, isLoad := Underlying(st.Val).(*ssa.UnOp)
			if !isLoad || u.Op != token.MUL {
				continue
			}
			if fa, ok := u.X.(*ssa.FieldAddr); ok && fo.group[lockop.FieldOf(fa)] == sub {
				at := fa.Pos()
				if !pos.IsValid() || at.IsValid() && at < pos {
					pos = at
				}
				copied = true
			}
		}
	}
	return pos, copied
}

// SiblingCopy reports where the package stores one field of an object
// into another field of the same object (`cd.nextLevel = cd.thisLevel`),
// fields named a and b in either direction, of a type holding the lock of
// class: the two then name one object, so that lock reached through each
// is one lock there.
func (x *Index) SiblingCopy(a, b, class string) (pos token.Pos, copied bool) {
	fo := x.fieldRecord()
	if fo.siblings == nil {
		fo.siblings = siblingCopies(fo.stores)
	}
	for _, c := range fo.siblings {
		if (c.from.Name() == a && c.to.Name() == b || c.from.Name() == b && c.to.Name() == a) && holdsClass(c.to.Type(), class) {
			return c.pos, true // the first by position
		}
	}
	return token.NoPos, false
}

// siblingCopy is one store of a field's load into another field of the
// same object.
type siblingCopy struct {
	from, to *types.Var
	pos      token.Pos
}

// siblingCopies lists the package's sibling copies by position.
func siblingCopies(stores map[*types.Var][]*ssa.Store) []siblingCopy {
	out := []siblingCopy{}
	for to, sts := range stores {
		for _, st := range sts {
			// The load itself, not what it is known to hold: the copy
			// is what makes the two fields one.
			u, isLoad := st.Val.(*ssa.UnOp)
			if !isLoad || u.Op != token.MUL {
				continue
			}
			from, ok := u.X.(*ssa.FieldAddr)
			if !ok || lockop.FieldOf(from) == nil || lockop.FieldOf(from) == to {
				continue
			}
			if Underlying(from.X) == Underlying(st.Addr.(*ssa.FieldAddr).X) {
				out = append(out, siblingCopy{lockop.FieldOf(from), to, st.Pos()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pos < out[j].pos })
	return out
}

// holdsClass reports whether t, or what it points to, is the named type
// declaring the lock of class.
func holdsClass(t types.Type, class string) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && strings.HasPrefix(class, types.TypeString(n.Origin(), nil)+".")
}

// StoresInto lists the package's stores into field f.
func (x *Index) StoresInto(f *types.Var) []*ssa.Store { return x.fieldRecord().stores[f] }
