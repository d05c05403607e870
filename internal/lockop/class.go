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
// package var.
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
	if owner := OwnerType(v); owner != nil {
		return pkg + owner.Obj().Name() + "." + v.Name()
	}
	return pkg + "struct." + v.Name()
}

// ShortName is ClassKey without the package path: "Consumer.mu".
func ShortName(v *types.Var) string {
	if v == nil {
		return "?"
	}
	v = v.Origin() // a field of an instantiated generic type
	if v.IsField() {
		if owner := OwnerType(v); owner != nil {
			return owner.Obj().Name() + "." + v.Name()
		}
	}
	return v.Name()
}

// OwnerType finds the named struct type of field's package that declares
// field directly, or nil. The field-to-type index is built once per
// package: scanning the scope per call was a third of confinelint's CPU.
func OwnerType(field *types.Var) *types.Named {
	if field.Pkg() == nil {
		return nil
	}
	return ownersOf(field.Pkg())[field]
}

// owners caches, per package, which named struct declares each field.
var owners sync.Map // *types.Package -> map[*types.Var]*types.Named

func ownersOf(pkg *types.Package) map[*types.Var]*types.Named {
	if m, ok := owners.Load(pkg); ok {
		return m.(map[*types.Var]*types.Named)
	}
	m := map[*types.Var]*types.Named{}
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
		st, ok := n.Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for i := range st.NumFields() {
			if _, dup := m[st.Field(i)]; !dup {
				m[st.Field(i)] = n
			}
		}
	}
	actual, _ := owners.LoadOrStore(pkg, m)
	return actual.(map[*types.Var]*types.Named)
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
