package locks

import (
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strconv"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// A field of a struct that annotates its other fields, accessed with a
// sibling lock of the same object held at (nearly) every access, looks
// like a guard somebody forgot to write down: checklocks' "may require
// checklocks annotation". Only annotated structs are looked at (in
// unannotated code the suggest analyzer does this, off by default), and
// a field must be written at least once outside construction: a field
// only ever read needs no guard.

// guardUse counts the checked accesses of one field, by source position
// (x.f++ is two SSA accesses at one place).
type guardUse struct {
	sites  map[token.Pos]bool
	writes int
	held   map[*types.Var]map[token.Pos]bool // sibling lock -> sites with it held
}

// inferredThreshold is the share of accesses that must hold the lock.
const inferredThreshold = 0.9

// observeAccess records an access of field v (of this package, in an
// annotated struct) through base, and which sibling locks of the same
// object are held (definitely) under s. Only fields with no declaration
// count: another lock held around a guarded field is incidental (the
// commit lock around a stats field guarded by its own lock). paths are
// the field's own guard paths at this access, none for such a field.
func (w *walker) observeAccess(v *types.Var, g *guard, base ssa.Value, acc access, paths []string, pos token.Pos, s State) {
	if !w.report || g == nil || g.ignore || g.readAny || v.Pkg() != w.e.p.Pass.Pkg || !acc.read && !acc.write || lockop.IsSyncType(v.Type()) || isLockValue(v.Type()) {
		return
	}
	if !g.plain {
		return // declared guarded (or atomic): a lock held besides is incidental
	}
	owner := lockop.OwnerType(v)
	if owner == nil {
		return
	}
	st, ok := owner.Underlying().(*types.Struct)
	if !ok {
		return
	}
	u := w.e.guardUses[v]
	if u == nil {
		u = &guardUse{sites: map[token.Pos]bool{}, held: map[*types.Var]map[token.Pos]bool{}}
		w.e.guardUses[v] = u
	}
	u.sites[pos] = true
	if acc.write {
		u.writes++
	}
	basePath := pathOf(w.fn, base)
	for f := range st.Fields() {
		if f == v || !isLockValue(f.Type()) {
			continue
		}
		p := basePath + "." + f.Name()
		if slices.Contains(paths, p) {
			continue
		}
		if h, ok := s.find(p); ok && !h.Maybe && !(acc.write && h.Shared) {
			if u.held[f] == nil {
				u.held[f] = map[token.Pos]bool{}
			}
			u.held[f][pos] = true
		}
	}
}

// reportInferredGuards reports, at the field, a sibling lock held at
// inferredThreshold of its accesses or more.
func (e *engine) reportInferredGuards() {
	fields := make([]*types.Var, 0, len(e.guardUses))
	for v := range e.guardUses {
		fields = append(fields, v)
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Pos() < fields[j].Pos() })
	for _, v := range fields {
		u := e.guardUses[v]
		if u.writes == 0 {
			continue
		}
		locks := make([]*types.Var, 0, len(u.held))
		for l := range u.held {
			locks = append(locks, l)
		}
		sort.Slice(locks, func(i, j int) bool { return locks[i].Pos() < locks[j].Pos() })
		for _, l := range locks {
			n, total := len(u.held[l]), len(u.sites)
			if float64(n) < inferredThreshold*float64(total) {
				continue
			}
			e.find(v.Pos(), "guardedby-missing", lockop.ShortName(v)+" is accessed with "+lockop.ShortName(l)+" held at "+
				strconv.Itoa(n)+" of its "+strconv.Itoa(total)+" accesses but is not declared guarded by it: its struct annotates other fields, so declare //confined:guardedby "+
				l.Name()+" (+checklocks:"+l.Name()+"), or +checklocksignore if it needs no lock")
		}
	}
}

// isLockValue reports whether t is a mutex kept by value (sync.Mutex,
// sync.RWMutex or a type embedding one's methods): a sibling lock.
func isLockValue(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface:
		return false
	}
	return lockop.IsLocker(t)
}
