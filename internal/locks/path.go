package locks

import (
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// Lock paths are symbolic, relative to the function they occur in, so that
// a callee's summary can be rewritten in its caller's terms:
//
//	p0.mu        field mu of the function's first SSA parameter (the receiver of a method)
//	f1.state.mu  through the closure's second free variable
//	g:pkg/path.mu  a package var (g: and its class key)
//	v:t5.mu      through a value with no symbolic name (call result, phi):
//	             meaningful only inside the function
//
// Loads are transparent (c.state.mu is the same path whether state is a
// value or a pointer field), so two reads of the same field name the same
// lock even when the field was reassigned between them: an accepted
// imprecision shared with checklocks.

// pathOf returns the symbolic path of v inside fn.
func pathOf(fn *ssa.Function, v ssa.Value) string {
	root, parts := splitPath(fn, v)
	reversed := make([]string, len(parts))
	for i, p := range parts {
		reversed[len(parts)-1-i] = p.name
	}
	return joinPath(root, reversed)
}

func joinPath(root string, reversed []string) string {
	var b strings.Builder
	b.WriteString(root)
	for i := len(reversed) - 1; i >= 0; i-- {
		b.WriteByte('.')
		b.WriteString(reversed[i])
	}
	return b.String()
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
			return globalPath(obj)
		}
	}
	return "v:" + v.Name()
}

func fieldName(t types.Type, i int) string {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if st, ok := t.Underlying().(*types.Struct); ok && i < st.NumFields() {
		return st.Field(i).Name()
	}
	return "?"
}

// portable reports whether a path means something outside its function:
// rooted at a parameter, free variable or package var.
func portable(path string) bool {
	return !strings.HasPrefix(path, "v:")
}

// rootOf splits a path into its root and the rest (".a.b" or "").
func rootOf(path string) (root, rest string) {
	if strings.HasPrefix(path, "g:") {
		return path, ""
	}
	if i := strings.IndexByte(path, '.'); i >= 0 {
		return path[:i], path[i:]
	}
	return path, ""
}

// paramIndex returns N for a root "pN", or -1.
func paramIndex(root, prefix string) int {
	if !strings.HasPrefix(root, prefix) {
		return -1
	}
	n, err := strconv.Atoi(root[len(prefix):])
	if err != nil {
		return -1
	}
	return n
}

// rewrite maps a callee-relative path into the caller: parameter roots
// become the caller's paths of the arguments, free variables the paths of
// the closure's bindings. Package vars stay. ok is false when the path
// cannot be expressed in the caller (a callee-local lock).
func rewrite(path string, args, bindings []string) (string, bool) {
	root, rest := rootOf(path)
	if i := paramIndex(root, "p"); i >= 0 {
		if i < len(args) && args[i] != "" {
			return args[i] + rest, true
		}
		return "", false
	}
	if i := paramIndex(root, "f"); i >= 0 {
		if i < len(bindings) && bindings[i] != "" {
			return bindings[i] + rest, true
		}
		return "", false
	}
	return path, portable(path)
}

// globalPath is the path of a package var: never rewritten across calls.
func globalPath(v *types.Var) string { return "g:" + lockop.ClassKey(v) }
