package objects

import (
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// Paths are symbolic, relative to the function they occur in, so that a
// callee's summary can be rewritten in its caller's terms:
//
//	p0.mu          field mu of the function's first SSA parameter (a method's receiver)
//	f1.state.mu    through the closure's second free variable
//	g:pkg/path.mu  a package var (g: and its class key)
//	v:t5.mu        through a value with no symbolic name (an allocation, a
//	               call result): meaningful only inside the function
//	p0.a[p1].mu    an element: the index is a constant or the index value's path
//	p0.m[k:p1].mu  a map entry, keyed the same way
//	c:pkg.T.m[]    a lock known by its class only (one key's lock a helper
//	               left held, see ClassPath): the same in every function
//
// Loads are transparent (c.state.mu is the same path whether state is a
// value or a pointer field), so two reads of the same field name the same
// object even when the field was reassigned between them: an accepted
// imprecision shared with checklocks. Values are seen through Underlying,
// so a captured variable, a conversion or a fresh object's field read back
// name what they hold, and through a call of a getter of the package
// (getter.go), which names the field it returns.

// Part is one selection of a path, with the named struct it selects from
// (nil when unknown, or for an index).
type Part struct {
	Name string
	Base *types.Named
	// Deref: the selection reads a pointer stored in the object (a pointer
	// field, or an element of a slice or map): what follows lives in
	// another object.
	Deref bool
}

// PathOf returns the symbolic path of v inside fn.
func PathOf(fn *ssa.Function, v ssa.Value) string {
	root, parts := SplitPath(fn, v)
	return Join(root, parts)
}

// Join renders a root and its selections.
func Join(root string, parts []Part) string {
	var b strings.Builder
	b.WriteString(root)
	for _, p := range parts {
		if !strings.HasPrefix(p.Name, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p.Name)
	}
	return b.String()
}

// SplitPath is PathOf keeping each selection, root first.
func SplitPath(fn *ssa.Function, v ssa.Value) (string, []Part) {
	root, rev := splitRev(fn, v, 0)
	slices.Reverse(rev)
	return root, rev
}

// maxIndexDepth bounds paths nested in index expressions (a[b[c[i]]]).
const maxIndexDepth = 2

func splitRev(fn *ssa.Function, v ssa.Value, depth int) (string, []Part) {
	var rev []Part
	deref := false // the selection just seen went through a load
	for range maxSteps {
		if x, ok := v.(*ssa.Extract); ok && x.Index == 0 {
			if ta, ok := x.Tuple.(*ssa.TypeAssert); ok {
				// v, ok := x.(T): x as a T, told apart from x as another type.
				rev = append(rev, Part{Name: "(" + ta.AssertedType.String() + ")"})
				v = ta.X
				continue
			}
		}
		if next := step(v, true); next != nil {
			v = next
			continue
		}
		switch x := v.(type) {
		case *ssa.FieldAddr:
			rev = append(rev, Part{Name: FieldName(x.X.Type(), x.Field), Base: NamedOf(x.X.Type()), Deref: deref})
			v, deref = x.X, false
			continue
		case *ssa.Field:
			rev = append(rev, Part{Name: FieldName(x.X.Type(), x.Field), Base: NamedOf(x.X.Type()), Deref: deref})
			v, deref = x.X, false
			continue
		case *ssa.IndexAddr:
			rev = append(rev, Part{Name: "[" + indexKey(fn, x.Index, depth) + "]", Deref: deref || isSlice(x.X.Type())})
			v, deref = x.X, false
			continue
		case *ssa.Index:
			rev = append(rev, Part{Name: "[" + indexKey(fn, x.Index, depth) + "]", Deref: deref})
			v, deref = x.X, false
			continue
		case *ssa.Lookup:
			if !x.CommaOk {
				rev = append(rev, Part{Name: "[k:" + indexKey(fn, x.Index, depth) + "]", Deref: true})
				v, deref = x.X, false
				continue
			}
		case *ssa.UnOp:
			if x.Op == token.MUL {
				if _, key, stored := storedThrough(x); stored && key != "" {
					return key, rev // stored through since entry: not the entry's object
				}
				v, deref = x.X, true
				continue
			}
		case *ssa.Call:
			if from, parts, ok := getterPath(x); ok {
				for i := len(parts) - 1; i >= 0; i-- {
					rev = append(rev, parts[i])
				}
				v, deref = from, false
				continue
			}
			if recv, part, ok := accessorCall(fn, x); ok {
				if len(x.Call.Args) == 2 {
					key := indexKey(fn, x.Call.Args[1], depth)
					if key == "?" {
						break
					}
					rev = append(rev, Part{Name: "[k:" + key + "]", Deref: true})
				}
				rev = append(rev, part)
				v, deref = recv, false
				continue
			}
		}
		break
	}
	return rootName(fn, v), rev
}

// indexKey names an index structurally: a constant's value, or the path
// of the index value (so s.a[i].mu and s.a[i].f share "p0.a[p1]").
func indexKey(fn *ssa.Function, idx ssa.Value, depth int) string {
	if c, ok := idx.(*ssa.Const); ok {
		if c.Value == nil {
			return "nil"
		}
		if c.Value.Kind() == constant.String {
			return strconv.Quote(constant.StringVal(c.Value))
		}
		return c.Value.ExactString()
	}
	if depth >= maxIndexDepth {
		return "?"
	}
	root, rev := splitRev(fn, idx, depth+1)
	slices.Reverse(rev)
	return Join(root, rev)
}

func isSlice(t types.Type) bool {
	_, ok := t.Underlying().(*types.Slice)
	return ok
}

func rootName(fn *ssa.Function, v ssa.Value) string {
	switch x := v.(type) {
	case *ssa.Parameter:
		for i, p := range fn.Params {
			if p == x {
				return "p" + strconv.Itoa(i)
			}
		}
	case *ssa.FreeVar:
		for i, f := range fn.FreeVars {
			if f == x {
				return "f" + strconv.Itoa(i)
			}
		}
	case *ssa.Global:
		if obj, ok := x.Object().(*types.Var); ok {
			return GlobalPath(obj)
		}
	}
	return "v:" + v.Name()
}

// FieldName names field i of the struct t is or points to, "?" when
// there is none.
func FieldName(t types.Type, i int) string {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if st, ok := t.Underlying().(*types.Struct); ok && i < st.NumFields() {
		return st.Field(i).Name()
	}
	return "?"
}

// StructOf is the struct type t selects from (through one pointer), nil
// when it is none.
func StructOf(t types.Type) *types.Struct {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	st, _ := t.Underlying().(*types.Struct)
	return st
}

// OnlySelected reports whether every use of the address addr selects
// further into it: in ps.a.b = x the address of ps.a is such a step, and
// the outer selection is the access.
func OnlySelected(addr ssa.Value) bool {
	refs := addr.Referrers()
	if refs == nil || len(*refs) == 0 {
		return false
	}
	for _, r := range *refs {
		switch r.(type) {
		case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.DebugRef:
		default:
			return false
		}
	}
	return true
}

// NamedOf is the named type of t or of what t points to, nil when unnamed.
func NamedOf(t types.Type) *types.Named {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

// Portable reports whether a path means something outside its function:
// rooted at a parameter, free variable or package var.
func Portable(path string) bool {
	return !strings.HasPrefix(path, "v:")
}

// RootOf splits a path into its root and the rest (".a.b", "[p1].c" or "").
func RootOf(path string) (root, rest string) {
	if strings.HasPrefix(path, "g:") {
		return path, ""
	}
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i], path[i:]
	}
	return path, ""
}

// ParamIndex returns N for a root prefix+"N", or -1.
func ParamIndex(root, prefix string) int {
	if !strings.HasPrefix(root, prefix) {
		return -1
	}
	n, err := strconv.Atoi(root[len(prefix):])
	if err != nil {
		return -1
	}
	return n
}

// Rewrite maps a callee-relative path into the caller: parameter roots
// become the caller's paths of the arguments, free variables the paths of
// the closure's bindings. Package vars stay. ok is false when the path
// cannot be expressed in the caller (a callee-local object, or an outer
// path of a closure, which only its creator can say). Index keys
// inside the path are rewritten the same way, or the path is not
// expressible.
func Rewrite(path string, args, bindings []string) (string, bool) {
	if _, outer := Outer(path); outer {
		return "", false // the creator's: see PathIn
	}
	if IsClassPath(path) {
		return path, true
	}
	root, rest := RootOf(path)
	var base string
	if i := ParamIndex(root, "p"); i >= 0 {
		if i >= len(args) || args[i] == "" {
			return "", false
		}
		base = args[i]
	} else if i := ParamIndex(root, "f"); i >= 0 {
		if i >= len(bindings) || bindings[i] == "" {
			return "", false
		}
		base = bindings[i]
	} else if !Portable(path) {
		return "", false
	} else if i := strings.IndexByte(path, '['); i >= 0 {
		root, rest = path[:i], path[i:] // a package var's element
		base = root
	} else {
		return path, true
	}
	rest, ok := rewriteIndexes(rest, args, bindings)
	if !ok {
		return "", false
	}
	return base + rest, true
}

// rewriteIndexes rewrites the paths inside "[...]" keys of rest.
func rewriteIndexes(rest string, args, bindings []string) (string, bool) {
	if !strings.Contains(rest, "[") {
		return rest, true
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(rest, '[')
		if i < 0 {
			b.WriteString(rest)
			return b.String(), true
		}
		j := matching(rest, i)
		if j < 0 {
			return "", false
		}
		b.WriteString(rest[:i+1])
		key := rest[i+1 : j]
		prefix := ""
		if strings.HasPrefix(key, "k:") {
			prefix, key = "k:", key[2:]
		}
		if isSymbolic(key) {
			k, ok := Rewrite(key, args, bindings)
			if !ok {
				return "", false
			}
			key = k
		}
		b.WriteString(prefix + key + "]")
		rest = rest[j+1:]
	}
}

// isSymbolic reports whether an index key is a path, not a constant.
func isSymbolic(key string) bool {
	if key == "" || key == "?" || key == "nil" || key[0] == '"' {
		return false
	}
	c := key[0]
	return !(c >= '0' && c <= '9' || c == '-')
}

// matching returns the index of the ']' closing the '[' at i, or -1.
func matching(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// ClassPath is the path of a lock known by its class only: one key's lock
// of a per-key container that a helper left held or released for its
// caller, which cannot name the key. Never rewritten across calls; the
// engine may suffix it ("@" and a position) to tell acquisitions apart.
func ClassPath(class string) string { return "c:" + class }

// IsClassPath reports whether path is a ClassPath (suffixed or not).
func IsClassPath(path string) bool { return strings.HasPrefix(path, "c:") }

// GlobalPath is the path of a package var: never rewritten across calls.
func GlobalPath(v *types.Var) string { return "g:" + lockop.ClassKey(v) }

// PathFrom returns the path, in fn, of the value v of owner, a function
// enclosing fn (fn is a closure created, directly or through other
// closures, in owner): see PathIn.
func (x *Index) PathFrom(fn, owner *ssa.Function, v ssa.Value) string {
	return x.PathIn(fn, owner, PathOf(owner, v))
}

// PathIn translates path, relative to owner, into fn, a closure created
// (directly or through other closures) in owner: through the free
// variables that carry it down, or as an outer path ("o:"+path) when fn's
// creator is owner and fn does not capture it. "" when it cannot be said.
func (x *Index) PathIn(fn, owner *ssa.Function, path string) string {
	if fn == owner {
		return path
	}
	mc := x.ClosureOf(fn)
	if mc == nil || mc.Parent() == nil {
		return ""
	}
	outer := x.PathIn(mc.Parent(), owner, path)
	if outer == "" {
		return ""
	}
	p := IntoClosure(outer, x.BindingPaths(mc), nil)
	if !Portable(p) || strings.HasPrefix(p, "o:") && mc.Parent() != owner {
		return ""
	}
	return p
}

// BindingPaths returns the paths, in the creating function, of a
// closure's bindings.
func (x *Index) BindingPaths(mc *ssa.MakeClosure) []string {
	binds := make([]string, len(mc.Bindings))
	for i, b := range mc.Bindings {
		binds[i] = PathOf(mc.Parent(), b)
	}
	return binds
}

// IntoClosure rewrites a path of the function creating (or calling in
// place) a closure in terms of the closure's free variables (binds are
// the bindings' paths in the creator) and parameters (args, the call's
// arguments' paths; nil when unknown), index keys included. Package vars
// stay; a path the closure does not capture becomes an outer path,
// "o:"+path, which means that path of the creating function (a lock the
// creator holds, a closure's unlock of the creator's lock); an outer path
// of the creator is not expressible ("v:outer").
func IntoClosure(path string, binds, args []string) string {
	if strings.HasPrefix(path, "g:") || IsClassPath(path) {
		return path
	}
	root, rest, ok := intoRoot(path, binds, args)
	if !ok {
		if strings.HasPrefix(path, "o:") {
			return "v:outer:" + path
		}
		return "o:" + path
	}
	// Index keys name values of the creator too.
	var b strings.Builder
	for {
		i := strings.IndexByte(rest, '[')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := matching(rest, i)
		if j < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i+1])
		key := rest[i+1 : j]
		prefix := ""
		if strings.HasPrefix(key, "k:") {
			prefix, key = "k:", key[2:]
		}
		if isSymbolic(key) && !strings.HasPrefix(key, "g:") {
			if r, kr, ok := intoRoot(key, binds, args); ok {
				key = r + kr
			} else {
				key = "?" // a value of the creator the closure cannot name
			}
		}
		b.WriteString(prefix + key + "]")
		rest = rest[j+1:]
	}
	return root + b.String()
}

// Under returns what path selects inside the object at root (".mu",
// "[k:p1].mu", "" for root itself), and whether path is root or inside it.
func Under(path, root string) (rest string, ok bool) {
	rest, ok = strings.CutPrefix(path, root)
	return rest, ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// intoRoot maps the root of a creator's path to the closure's parameter
// (pN) or free variable (fN) carrying it, returning the rest of the path.
func intoRoot(path string, binds, args []string) (string, string, bool) {
	for _, set := range []struct {
		prefix string
		paths  []string
	}{{"p", args}, {"f", binds}} {
		for i, b := range set.paths {
			if rest, ok := Under(path, b); b != "" && ok {
				return set.prefix + strconv.Itoa(i), rest, true
			}
		}
	}
	return "", "", false
}

// PathsOf is PathOf of each value.
func PathsOf(fn *ssa.Function, vs []ssa.Value) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = PathOf(fn, v)
	}
	return out
}

// Outer returns the creator's path an outer path names, and whether path
// is one.
func Outer(path string) (string, bool) { return strings.CutPrefix(path, "o:") }
