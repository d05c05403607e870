package lockop

import (
	"go/types"
	"strings"
	"sync"

	"golang.org/x/tools/go/ssa"
)

// ClassOf returns the lock class of a lock value: the field or package var
// that declares the lock, found through field selections, loads and
// pointer conversions. It returns nil for locks with no declaring site of
// that kind (locals, parameters).
func ClassOf(v ssa.Value) *types.Var {
	for range 16 { // bounded: SSA value chains here are short
		switch x := v.(type) {
		case *ssa.FieldAddr:
			return fieldVar(x.X.Type(), x.Field)
		case *ssa.Field:
			return fieldVar(x.X.Type(), x.Field)
		case *ssa.Global:
			if obj, ok := x.Object().(*types.Var); ok {
				return obj
			}
			return nil
		case *ssa.UnOp:
			v = x.X // a load of a pointer-typed lock field or var
		case *ssa.ChangeType:
			v = x.X
		case *ssa.MakeInterface:
			v = x.X
		default:
			return nil
		}
	}
	return nil
}

// FieldOf is the struct field fa selects, nil when unknown.
func FieldOf(fa *ssa.FieldAddr) *types.Var { return fieldVar(fa.X.Type(), fa.Field) }

func fieldVar(t types.Type, i int) *types.Var {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok || i >= st.NumFields() {
		return nil
	}
	return st.Field(i)
}

// ClassKey names a lock class stably across packages and runs:
// "pkgpath.Type.field" for a field of a named struct, "pkgpath.var" for a
// package var. A field of an anonymous struct held by a named struct's
// field is named through it: "pkgpath.Store.coalescedMu.Mutex".
func ClassKey(v *types.Var) string {
	if v == nil {
		return ""
	}
	v = v.Origin()
	pkg := ""
	if v.Pkg() != nil {
		pkg = v.Pkg().Path() + "."
	}
	if !v.IsField() {
		return pkg + v.Name()
	}
	if o, ok := ownerOf(v); ok {
		return pkg + o.named.Obj().Name() + "." + o.prefix + v.Name()
	}
	return pkg + "struct." + v.Name()
}

// ShortName is ClassKey without the package path: "Consumer.mu". A lock
// embedded in an anonymous struct field is named by that field:
// "Store.coalescedMu", not "Mutex".
func ShortName(v *types.Var) string {
	if v == nil {
		return "?"
	}
	v = v.Origin() // a field of an instantiated generic type
	if v.IsField() {
		if o, ok := ownerOf(v); ok {
			if v.Embedded() && o.prefix != "" {
				return o.named.Obj().Name() + "." + strings.TrimSuffix(o.prefix, ".")
			}
			return o.named.Obj().Name() + "." + o.prefix + v.Name()
		}
	}
	return v.Name()
}

// OwnerType finds the named struct type of field's package that declares
// field directly, or nil.
func OwnerType(field *types.Var) *types.Named {
	if o, ok := ownerOf(field); ok && o.prefix == "" {
		return o.named
	}
	return nil
}

// EnclosingType finds the named struct type of field's package that
// holds field, directly or inside anonymous struct fields (`mu struct {
// sync.RWMutex; ... }`), or nil: one object of it holds one such field.
func EnclosingType(field *types.Var) *types.Named {
	if o, ok := ownerOf(field); ok {
		return o.named
	}
	return nil
}

// owner is the named struct a field belongs to, and the path of anonymous
// struct fields from it down to the field ("coalescedMu." or "").
type owner struct {
	named  *types.Named
	prefix string
}

func ownerOf(field *types.Var) (owner, bool) {
	if field.Pkg() == nil {
		return owner{}, false
	}
	o, ok := ownersOf(field.Pkg())[field]
	return o, ok
}

// owners caches, per package, the owner of each field: indexed once per
// package, since scanning the scope per call was a third of confinelint's
// CPU.
var owners sync.Map // *types.Package -> map[*types.Var]owner

func ownersOf(pkg *types.Package) map[*types.Var]owner {
	if m, ok := owners.Load(pkg); ok {
		return m.(map[*types.Var]owner)
	}
	m := map[*types.Var]owner{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		n, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		if st, ok := n.Underlying().(*types.Struct); ok {
			indexFields(m, n, st, "", 0)
		}
	}
	actual, _ := owners.LoadOrStore(pkg, m)
	return actual.(map[*types.Var]owner)
}

// indexFields records st's fields as n's, and the fields of anonymous
// structs inside them under their path.
func indexFields(m map[*types.Var]owner, n *types.Named, st *types.Struct, prefix string, depth int) {
	for i := range st.NumFields() {
		f := st.Field(i)
		if _, dup := m[f]; !dup {
			m[f] = owner{n, prefix}
		}
		if inner, ok := f.Type().(*types.Struct); ok && depth < 4 {
			indexFields(m, n, inner, prefix+f.Name()+".", depth+1)
		}
	}
}

// InsideObject reports whether the lock at path rest (".a.b.mu") from a
// value of type t lies inside the object t points to: every selection is
// a struct field held by value, so no pointer is followed on the way.
func InsideObject(t types.Type, rest string) bool {
	if rest == "" || strings.ContainsRune(rest, '[') {
		return false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	names := strings.Split(strings.TrimPrefix(rest, "."), ".")
	for _, name := range names {
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			return false
		}
		var f *types.Var
		for j := range st.NumFields() {
			if st.Field(j).Name() == name {
				f = st.Field(j)
			}
		}
		if f == nil {
			return false
		}
		t = f.Type()
		if _, isPtr := t.Underlying().(*types.Pointer); isPtr {
			return false // what follows, or the lock itself, is elsewhere
		}
	}
	return true
}

// ReturnedClass is the class of the lock a static callee returns on every
// path: a lock handed out by an accessor (`func (s *stripes) lockFor(k
// uint64) *sync.RWMutex { return &s.locks[k%n].RWMutex }`) is of the class
// the callee names. Nil when v is no such call or the returns disagree.
func ReturnedClass(v ssa.Value) *types.Var {
	call, ok := v.(*ssa.Call)
	if !ok {
		return nil
	}
	rets, ok := returnedValues(call)
	var c *types.Var
	for _, r := range rets {
		rc := ClassOf(r)
		if rc == nil || c != nil && rc != c {
			return nil
		}
		c = rc
	}
	return c
}

// returnedValues lists what the static callee of call returns, one value
// per return (the recover block's zero values left out); false when the
// callee is unknown, has no body or returns other than one value.
func returnedValues(call *ssa.Call) ([]ssa.Value, bool) {
	if call.Call.Signature().Results().Len() != 1 {
		return nil, false
	}
	return returnedResults(call, 0)
}

// returnedResults is returnedValues for result i of a call with any
// number of results.
func returnedResults(call *ssa.Call, i int) ([]ssa.Value, bool) {
	fn := call.Call.StaticCallee()
	if fn == nil || len(fn.Blocks) == 0 || i >= fn.Signature.Results().Len() {
		return nil, false
	}
	var out []ssa.Value
	for _, b := range fn.Blocks {
		if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && b != fn.Recover {
			out = append(out, ret.Results[i])
		}
	}
	return out, true
}

// InWrapper reports whether field is the one field of a named struct
// that only wraps it (`type Mutex struct{ sync.Mutex }`, cockroach's
// syncutil): every struct holding such a wrapper shares the field, so a
// lock is better named by the field holding the wrapper.
func InWrapper(field *types.Var) bool {
	n := EnclosingType(field)
	if n == nil || !field.Anonymous() {
		return false
	}
	st, ok := n.Underlying().(*types.Struct)
	return ok && st.NumFields() == 1
}
