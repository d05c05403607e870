package locks

import (
	"go/types"
	"slices"
	"sort"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/objects"
)

// typedParts is a resolved alias path as parts, each with the struct type
// it selects from (the first from owner).
func typedParts(owner *types.Named, lp *directive.LockPath) []part {
	out := make([]part, len(lp.Fields))
	for i, f := range lp.Fields {
		base := owner
		if i > 0 {
			base = objects.NamedOf(lp.Fields[i-1].Type())
		}
		out[i] = part{Name: f.Name(), Base: base}
	}
	return out
}

// checkAliasRedundancy reports an alias that the aliases of the types its
// paths go through already imply (+checklocksalias:in.inner.mu=in.mu when
// In declares inner.mu=mu), as checklocks does. An alias repeated on the
// same type is a directive conflict already.
func (e *engine) checkAliasRedundancy() {
	var types []*types.Named
	for n := range e.aliases {
		types = append(types, n)
	}
	sort.Slice(types, func(i, j int) bool { return types[i].Obj().Pos() < types[j].Obj().Pos() })
	for _, n := range types {
		for _, a := range e.aliases[n] {
			if a.inferred {
				continue
			}
			from, to := e.canonicalParts(a.fromPart, a), e.canonicalParts(a.toPart, a)
			if !slices.Equal(from, to) {
				continue
			}
			e.find(a.dir.Pos, directive.CategoryConflict, a.dir.Spelling+":"+a.dir.Lock.Text+"="+a.dir.AliasOf.Text+
				" is redundant: the aliases of the types it goes through already make the two paths one lock",
				diag.Hop{Pos: n.Obj().Pos(), What: "declaration of " + n.Obj().Name() + ", which the comment documents"})
		}
	}
}

// canonicalParts rewrites parts with every alias but skip, as
// joinCanonical does, and returns the names.
func (e *engine) canonicalParts(parts []part, skip aliasPair) []string {
	parts = slices.Clone(parts)
	for i := 0; i < len(parts); i++ {
		for _, a := range e.aliases[parts[i].Base] {
			if a.inferred || slices.Equal(a.from, skip.from) && slices.Equal(a.to, skip.to) && a.dir.Pos == skip.dir.Pos {
				continue
			}
			if i+len(a.from) <= len(parts) && slices.Equal(names(parts[i:i+len(a.from)]), a.from) {
				parts = append(append(append([]part(nil), parts[:i]...), a.toPart...), parts[i+len(a.from):]...)
				break
			}
		}
	}
	return names(parts)
}
