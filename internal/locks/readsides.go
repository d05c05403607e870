package locks

import "github.com/confinelint/confinelint/facts"

// Read locks in a cycle: a goroutine holding a read lock blocks another
// that wants the read lock too only when a writer is waiting for it (a
// waiting writer makes every later RLock wait). A cycle whose two
// witnesses meet at such a lock with read locks on both sides (one holds
// it shared, the next asks for it shared) deadlocks only behind a writer:
// the finding says so and names one, so that the reader can judge
// whether a writer can come between (pion's fix read-locked its manager
// on both sides; adding a port during the checks still deadlocks). When
// no writer can exist (an unexported field of the package that no
// function of it write-locks), the cycle is not reported.

// edgeEnds says whether some witness of an edge holds From, or takes To,
// exclusively.
type edgeEnds struct{ from, to bool }

// noteEnds records a witness's modes for its edge key (every witness,
// not only the one kept).
func (e *engine) noteEnds(k edgeKey, ends edgeEnds) {
	if e.exclusive == nil {
		e.exclusive = map[edgeKey]edgeEnds{}
	}
	e.exclusive[k] = e.exclusive[k].or(ends)
}

// noteImportedEnds records the modes of an edge from the facts, whether
// or not the graph keeps it as the witness of its key.
func (e *engine) noteImportedEnds(x facts.Edge) {
	if e.importedEnds == nil {
		e.importedEnds = map[edgeKey]edgeEnds{}
	}
	k := edgeKey{x.From, x.To, x.FromSub, x.ToSub}
	e.importedEnds[k] = e.importedEnds[k].or(edgeEnds{from: !x.FromShared, to: !x.ToShared})
}

func (a edgeEnds) or(b edgeEnds) edgeEnds { return edgeEnds{from: a.from || b.from, to: a.to || b.to} }

// count is how many ends are exclusive.
func (a edgeEnds) count() int {
	n := 0
	for _, x := range []bool{a.from, a.to} {
		if x {
			n++
		}
	}
	return n
}

// sharedEnds reports whether every witness of x's key, in this package
// and in the facts, holds From, takes To, as a read lock.
func (e *engine) sharedEnds(x edge) (from, to bool) {
	ends := e.exclusive[x.key()].or(e.importedEnds[x.key()])
	return !ends.from, !ends.to
}

// readJoints returns the edges of es (a cycle in order) into a lock that
// the next edge holds as a read lock while this one asks to read it.
func (e *engine) readJoints(es []edge) []edge {
	var out []edge
	for i, x := range es {
		_, wants := e.sharedEnds(x)
		holds, _ := e.sharedEnds(es[(i+1)%len(es)])
		if wants && holds {
			out = append(out, x)
		}
	}
	return out
}

// unwrittenReadJoint reports whether the cycle es meets, at some lock,
// with read locks on both sides, and no writer can wait for that lock:
// none in the package write-locks it, and no other package can (an
// unexported field of this package's type). It cannot deadlock there.
func (e *engine) unwrittenReadJoint(es []edge) bool {
	for _, x := range e.readJoints(es) {
		if e.ownUnexported(x.To) && e.writerOf(x.To) == "" {
			return true
		}
	}
	return false
}

// ownUnexported reports whether class is an unexported field declared in
// this package: only this package can lock it (as for privateLeaves).
func (e *engine) ownUnexported(class string) bool {
	v := e.classVars[class]
	return v != nil && v.IsField() && v.Pkg() == e.p.Pass.Pkg && !v.Exported()
}

// readOnlyNote returns the note for the locks where consecutive edges of
// es (a cycle in order) meet with read locks on both sides, "" when
// there is none.
func (e *engine) readOnlyNote(es []edge) string {
	note := ""
	for _, x := range e.readJoints(es) {
		note += "; " + x.ToName + " is read-locked on both sides, so this blocks only behind a waiting writer"
		if w := e.writerOf(x.To); w != "" {
			note += " (" + w + " write-locks it)"
		} else {
			note += " (none in this package write-locks it)"
		}
	}
	return note
}
