package locks

import (
	"go/token"
	"strconv"
)

// A checklocksforce comment on a statement: a check failing on that line is not
// reported, and the lock it wanted counts as held exclusively from there
// on (checkGuard, checkCallDecl), as checklocks does.

// forced reports whether pos is on a line a +checklocksforce applies to.
func (e *engine) forced(pos token.Pos) bool {
	if !pos.IsValid() || e.p.Directives == nil || len(e.p.Directives.Forces) == 0 {
		return false
	}
	if e.forceLines == nil {
		e.forceLines = map[string]bool{}
		for _, d := range e.p.Directives.Forces {
			e.forceLines[e.lineKey(d.Pos, d.Line)] = true
		}
	}
	p := e.p.Pass.Fset.Position(pos)
	return e.forceLines[e.lineKey(pos, p.Line)]
}

// lineKey names a line of the file holding pos.
func (e *engine) lineKey(pos token.Pos, line int) string {
	return e.p.Pass.Fset.File(pos).Name() + ":" + strconv.Itoa(line)
}
