package directive

import (
	"go/types"
	"slices"
)

// noteGuard records that a guard naming lock was written on obj, resolved
// or not: a readany is judged by the guards written, so a guard with a
// problem of its own does not make the readany a second problem.
func (c *collector) noteGuard(obj types.Object, lock string) {
	if c.guardsWritten == nil {
		c.guardsWritten = map[types.Object][]string{}
	}
	if !slices.Contains(c.guardsWritten[obj], lock) {
		c.guardsWritten[obj] = append(c.guardsWritten[obj], lock)
	}
}

// checkReadAny drops every +checklocksreadany on a field with fewer than
// two guards: it chooses among the field's guards, so with none it has
// nothing to relax (a problem) and with one it changes nothing (dropped
// silently, as checklocks accepts it: a checklocks user's annotations are
// read without edits, and a second guard may come later).
func (c *collector) checkReadAny() {
	for obj, ds := range c.set.Objects {
		i := slices.IndexFunc(ds, func(d Directive) bool { return d.Verb == ReadAny })
		if i < 0 {
			continue
		}
		d := ds[i]
		switch n := len(c.guardsWritten[obj]); n {
		case 0:
			c.report(d.owner(), CategoryPlacement, d.Pos, d.End,
				"%s on field %s, which has no guard: it lets a read hold any one of a field's several guards (+checklocks:mu lines on the field)",
				d.Spelling, obj.Name())
			p := &c.set.Problems[len(c.set.Problems)-1]
			p.Decl, p.DeclName = obj.Pos(), obj.Name()
		case 1:
		default:
			continue
		}
		c.set.Objects[obj] = slices.Delete(ds, i, i+1)
		if len(c.set.Objects[obj]) == 0 {
			delete(c.set.Objects, obj)
		}
	}
}
