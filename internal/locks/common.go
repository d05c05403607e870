package locks

import (
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/program"
)

// An interface call with several candidates runs one of them: what every
// candidate does for sure to the lock of the same path (relative to the
// callee, the same for all: the receiver and arguments are the call's) is
// what the call does. withCommonEffects adds a target applying that, as a
// static call would: a double lock when all of them take a lock the
// caller holds, the acquires and releases of a Lock/Unlock pair.

// withCommonEffects appends to the candidates of an interface call a
// target that carries their common certain effects, when there are some.
func (w *walker) withCommonEffects(ts []target, call *ssa.CallCommon) []target {
	if len(ts) < 2 || ts[0].exact || !call.IsInvoke() {
		return ts
	}
	sums := w.candidateSums(ts)
	if sums == nil {
		return ts
	}
	common := commonSummary(sums)
	if common == nil {
		return ts
	}
	t := ts[0]
	t.exact, t.sum, t.label = true, common, program.ObjName(call.Method, w.e.p.Pass.Pkg)
	return append(ts, t)
}

// candidateSums returns the summary of each candidate in ts, nil when
// one has none.
func (w *walker) candidateSums(ts []target) []*funcInfo {
	sums := make([]*funcInfo, len(ts))
	for i := range ts {
		if sums[i] = w.e.summaryOf(ts[i].fn); sums[i] == nil {
			return nil
		}
	}
	return sums
}

// commonSummary returns the takes on every path, acquires and releases of
// a path that every summary has, nil when there is none. Classes that
// differ between candidates are dropped: the lock is known by its path.
func commonSummary(sums []*funcInfo) *funcInfo {
	out := &funcInfo{}
	for _, tk := range sums[0].takes {
		if tk.cond != 0 || tk.Path == "" || tk.afterRelease {
			continue
		}
		var names []string
		agree := true
		for _, o := range sums {
			i := slices.IndexFunc(o.takes, func(x take) bool {
				return x.Path == tk.Path && x.Shared == tk.Shared && x.cond == 0 && !x.afterRelease
			})
			if i < 0 {
				agree = false
				break
			}
			names = appendNew(names, o.takes[i].Name)
			if o.takes[i].Class != tk.Class {
				tk.Class, tk.Sub = "", ""
			}
		}
		if agree {
			tk.Name = strings.Join(names, " or ")
			out.takes = append(out.takes, tk)
		}
	}
	out.acquires = commonHolds(sums, func(f *funcInfo) []Hold { return f.acquires })
	out.releases = commonHolds(sums, func(f *funcInfo) []Hold { return f.releases })
	if len(out.takes)+len(out.acquires)+len(out.releases) == 0 {
		return nil
	}
	return out
}

func commonHolds(sums []*funcInfo, of func(*funcInfo) []Hold) []Hold {
	var out []Hold
	for _, h := range of(sums[0]) {
		var names []string
		agree := true
		for _, o := range sums {
			i := slices.IndexFunc(of(o), func(x Hold) bool { return x.Path == h.Path && x.Shared == h.Shared })
			if i < 0 {
				agree = false
				break
			}
			names = appendNew(names, of(o)[i].Name)
			if of(o)[i].Class != h.Class {
				h.Class, h.Sub = "", ""
			}
		}
		if agree {
			h.Name = strings.Join(names, " or ")
			out = append(out, h)
		}
	}
	return out
}

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// The candidates of a func value read from where several functions are
// stored (a slice of handlers run under the lock) each reach the locked
// object through what they captured, so no path is common to them. What
// they all take on every path, by class, the call takes whichever runs:
// withCommonClassTakes adds a target that carries those takes without a
// path, a double lock only where the program makes one object of the
// class's type (singletonHeld: istio's mesh watcher running its handlers,
// which read the mesh back through the watcher).

// withCommonClassTakes appends to the candidates of a func-value call a
// target carrying the takes of a class every candidate makes for sure.
func (w *walker) withCommonClassTakes(ts []target, call *ssa.CallCommon) []target {
	if len(ts) < 2 || call.IsInvoke() || !ts[0].several || ts[0].sum != nil {
		return ts
	}
	sums := w.candidateSums(ts)
	if sums == nil {
		return ts
	}
	names := make([]string, len(ts))
	for i := range ts {
		names[i] = w.e.funcName(ts[i].fn)
	}
	sure := func(x take) bool { return x.Class != "" && x.cond == 0 && x.branch == 0 && !x.afterRelease && !x.loose }
	common := &funcInfo{}
	for _, tk := range sums[0].takes {
		if !sure(tk) || slices.ContainsFunc(common.takes, func(x take) bool { return x.Class == tk.Class && x.Shared == tk.Shared }) {
			continue
		}
		if !slices.ContainsFunc(sums[1:], func(o *funcInfo) bool {
			return !slices.ContainsFunc(o.takes, func(x take) bool { return sure(x) && x.Class == tk.Class && x.Shared == tk.Shared })
		}) {
			tk.Path = ""
			common.takes = append(common.takes, tk)
		}
	}
	if len(common.takes) == 0 {
		return ts
	}
	t := ts[0]
	t.exact, t.several, t.sum, t.label = true, false, common, strings.Join(names, " or ")
	return append(ts, t)
}
