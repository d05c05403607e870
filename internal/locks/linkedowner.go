package locks

import (
	"go/token"
	"go/types"
	"slices"
	"strings"

	"github.com/confinelint/confinelint/internal/objects"
)

// Nodes linked to each other share their owner: a content tree's nodes
// each point to the tree, and a node's parent is in the same tree, so
// n.parent.tree.mu is n.tree.mu (hugo's content tree, a recursive read
// lock through the parent's accessor). Only for links to an object of
// the node's own type (parent, next, prev) and an owner of another type:
// a node's own lock and its parent's are two locks.

// linkedOwner says, for a held lock at path held and one taken at path
// taken, why they are the same lock when they are: one path follows
// same-type links from the other's root before both reach the owner
// field; "" otherwise.
func (w *walker) linkedOwner(held, taken string) string {
	hops, owner, root := linkHops(held, taken)
	if hops == nil {
		return ""
	}
	node := w.rootType(root)
	st, ok := structOf(node)
	if !ok {
		return ""
	}
	for _, hop := range hops {
		if f := fieldNamed(st, hop); f == nil || !pointsTo(f.Type(), node) {
			return ""
		}
	}
	if f := fieldNamed(st, owner); f == nil || pointsTo(f.Type(), node) {
		return ""
	}
	return ", the same lock: linked nodes share their " + owner + " (through ." + strings.Join(hops, ".") + "),"
}

// linkHops returns the fields one path follows beyond the other from the
// same root before both go on alike (p0.parent.tree.mu against
// p0.tree.mu: [parent], then tree), with the first field after them;
// nil when the paths differ otherwise or the steps are not plain fields.
func linkHops(a, b string) (hops []string, next, root string) {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	if len(as) > len(bs) {
		as, bs = bs, as
	}
	n, extra := len(as), len(bs)-len(as)
	if extra == 0 || n < 3 || as[0] != bs[0] || !slices.Equal(as[1:], bs[1+extra:]) {
		return nil, "", ""
	}
	for _, f := range bs[1 : 2+extra] {
		if !token.IsIdentifier(f) {
			return nil, "", ""
		}
	}
	return bs[1 : 1+extra], as[1], as[0]
}

// rootType is the type of a path root of the walked function: a
// parameter (p0) or a free variable (f0); nil for others.
func (w *walker) rootType(root string) types.Type {
	if i := paramIndex(root, "p"); i >= 0 && i < len(w.fn.Params) {
		return w.fn.Params[i].Type()
	}
	if i := paramIndex(root, "f"); i >= 0 && i < len(w.fn.FreeVars) {
		return w.fn.FreeVars[i].Type()
	}
	return nil
}

// structOf is the struct a pointer to a named struct points to.
func structOf(t types.Type) (*types.Struct, bool) {
	if t == nil {
		return nil, false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if _, named := types.Unalias(t).(*types.Named); !named {
		return nil, false
	}
	st := objects.StructOf(t)
	return st, st != nil
}

// pointsTo reports whether t is a pointer to node's struct type (node
// itself a pointer to it).
func pointsTo(t, node types.Type) bool {
	p, ok := t.Underlying().(*types.Pointer)
	if !ok {
		return false
	}
	if np, ok := node.Underlying().(*types.Pointer); ok {
		node = np.Elem()
	}
	return types.Identical(p.Elem(), node)
}

func fieldNamed(st *types.Struct, name string) *types.Var {
	for f := range st.Fields() {
		if f.Name() == name {
			return f
		}
	}
	return nil
}
