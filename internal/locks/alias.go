package locks

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/objects"
)

// //confined:alias A=B on a struct type says that, in every value of it,
// the lock paths A and B name the same lock. Paths are made canonical by
// rewriting A into B where the selection passes through that struct type.
// Only the package's own alias directives are known (facts do not carry
// the second path).

type aliasPair struct {
	from, to []string
	// Where it is declared, for the redundancy check (aliascheck.go).
	dir      directive.Directive
	fromPart []part // from and to with the struct type each selection is in
	toPart   []part
	// inferred: a back-pointer (objects.BackPointers), F.B=<the object>,
	// not declared; never redundant, never reported.
	inferred bool
}

func (e *engine) scanAliases() {
	e.aliases = map[*types.Named][]aliasPair{}
	for _, bp := range e.objs.BackPointers() {
		var to []string
		if bp.Lock != nil {
			to = []string{bp.Lock.Name()}
		}
		e.aliases[bp.Owner] = append(e.aliases[bp.Owner], aliasPair{from: []string{bp.Field.Name(), bp.Back.Name()}, to: to, inferred: true})
	}
	for _, sp := range e.objs.SelfPointers() {
		e.aliases[sp.Owner] = append(e.aliases[sp.Owner], aliasPair{from: []string{sp.Field.Name()}, inferred: true})
	}
	if e.p.Directives == nil {
		return
	}
	for obj, ds := range e.p.Directives.Objects {
		tn, ok := obj.(*types.TypeName)
		if !ok {
			continue
		}
		n, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		for _, d := range ds {
			if d.Verb == directive.Alias && d.Lock != nil && d.AliasOf != nil {
				e.aliases[n] = append(e.aliases[n], aliasPair{from: fieldNames(d.Lock), to: fieldNames(d.AliasOf),
					dir: d, fromPart: typedParts(n, d.Lock), toPart: typedParts(n, d.AliasOf)})
			}
		}
	}
}

func fieldNames(lp *directive.LockPath) []string {
	var out []string
	for _, f := range lp.Fields {
		out = append(out, f.Name())
	}
	return out
}

// lockPath is pathOf with aliases applied.
func (e *engine) lockPath(fn *ssa.Function, v ssa.Value) string {
	if len(e.aliases) == 0 {
		return pathOf(fn, v)
	}
	root, parts := splitPath(fn, v)
	return e.joinCanonical(root, parts)
}

// joinCanonical joins root and parts after rewriting aliased selections.
func (e *engine) joinCanonical(root string, parts []part) string {
	for i := 0; i < len(parts); i++ {
		for _, a := range e.aliases[parts[i].Base] {
			if i+len(a.from) <= len(parts) && slices.Equal(names(parts[i:i+len(a.from)]), a.from) {
				repl := make([]part, len(a.to))
				for j, n := range a.to {
					repl[j] = part{Name: n}
				}
				parts = append(append(append([]part(nil), parts[:i]...), repl...), parts[i+len(a.from):]...)
				break
			}
		}
	}
	return objects.Join(root, parts)
}

func names(ps []part) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// canonicalThrough is the path of the lock at rest (".ep.mu") inside the
// value v of fn, aliases applied along the whole selection: a callee's
// `+checklocks:igmp.ep.mu` on a receiver &e.igmp is e.mu where endpoint
// declares `igmp.ep.mu=mu`. fallback when rest is not a plain field chain.
func (e *engine) canonicalThrough(fn *ssa.Function, v ssa.Value, rest, fallback string) string {
	if v == nil {
		return fallback
	}
	if rest == "" {
		return e.lockPath(fn, v)
	}
	if len(e.aliases) == 0 || !strings.HasPrefix(rest, ".") || strings.ContainsAny(rest, "[]()") {
		return fallback
	}
	root, parts := splitPath(fn, v)
	t := v.Type()
	for _, name := range strings.Split(rest[1:], ".") {
		// Past a selection whose type is not known here (an interface
		// holding the callee's receiver), names stay untyped: no alias
		// starts there, one that starts before still applies.
		var base *types.Named
		var field *types.Var
		if t != nil {
			base = objects.NamedOf(t)
			if st, ok := derefStruct(t); ok {
				for f := range st.Fields() {
					if f.Name() == name {
						field = f
					}
				}
			}
		}
		if field == nil {
			parts = append(parts, part{Name: name})
			t = nil
			continue
		}
		_, isPtr := field.Type().Underlying().(*types.Pointer)
		parts = append(parts, part{Name: name, Base: base, Deref: isPtr})
		t = field.Type()
	}
	return e.joinCanonical(root, parts)
}

// calleePath is t.rewrite with the caller's aliases applied along the
// argument's selection: a callee's p0.onClose.mu, called on c.tr, is c.mu
// when the object in conn's tr points back to it through onClose.
func (w *walker) calleePath(t *target, path string) (string, bool) {
	p, ok := t.rewrite(w.fn, path)
	if !ok || len(w.e.aliases) == 0 {
		return p, ok
	}
	root, rest := rootOf(path)
	i := paramIndex(root, "p")
	if i < 0 || i >= len(t.vals) {
		return p, ok
	}
	if v := t.vals[i]; v != nil && v.Parent() == w.fn && !throughStored(w.fn, v, rest, t.at) {
		return w.e.canonicalThrough(w.fn, v, rest, p), true
	}
	return p, ok
}

func derefStruct(t types.Type) (*types.Struct, bool) {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	return st, ok
}
