package locks

import (
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/directive"
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
}

// part is one field selection of a path, with the named struct it selects
// from (nil when unknown).
type part struct {
	name string
	base *types.Named
}

func (e *engine) scanAliases() {
	e.aliases = map[*types.Named][]aliasPair{}
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
		for _, a := range e.aliases[parts[i].base] {
			if i+len(a.from) <= len(parts) && slices.Equal(names(parts[i:i+len(a.from)]), a.from) {
				repl := make([]part, len(a.to))
				for j, n := range a.to {
					repl[j] = part{name: n}
				}
				parts = append(append(append([]part(nil), parts[:i]...), repl...), parts[i+len(a.from):]...)
				break
			}
		}
	}
	var b strings.Builder
	b.WriteString(root)
	for _, p := range parts {
		b.WriteByte('.')
		b.WriteString(p.name)
	}
	return b.String()
}

func names(ps []part) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.name
	}
	return out
}

// splitPath is pathOf keeping each selection's struct type.
func splitPath(fn *ssa.Function, v ssa.Value) (string, []part) {
	var rev []part
	for range 32 {
		switch x := v.(type) {
		case *ssa.FieldAddr:
			rev = append(rev, part{fieldName(x.X.Type(), x.Field), namedOf(x.X.Type())})
			v = x.X
			continue
		case *ssa.Field:
			rev = append(rev, part{fieldName(x.X.Type(), x.Field), namedOf(x.X.Type())})
			v = x.X
			continue
		case *ssa.IndexAddr:
			rev = append(rev, part{name: "[" + indexName(fn, x.Index) + "]"})
			v = x.X
			continue
		case *ssa.Index:
			rev = append(rev, part{name: "[" + indexName(fn, x.Index) + "]"})
			v = x.X
			continue
		case *ssa.UnOp:
			if x.Op == token.MUL {
				v = x.X
				continue
			}
		case *ssa.ChangeType:
			v = x.X
			continue
		case *ssa.MakeInterface:
			v = x.X
			continue
		}
		break
	}
	slices.Reverse(rev)
	return rootName(fn, v), rev
}

// indexName names an index inside a path, so that s.a[i].mu and
// s.a[i].f meet: a constant by its value, a package var by its path, any
// other value by its path qualified with the function, so that it never
// matches a caller's or callee's index after a path is rewritten.
func indexName(fn *ssa.Function, v ssa.Value) string {
	if c, ok := v.(*ssa.Const); ok {
		return c.Value.String()
	}
	p := pathOf(fn, v)
	if strings.HasPrefix(p, "g:") {
		return p
	}
	return p + "@" + fn.String()
}

func namedOf(t types.Type) *types.Named {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}
