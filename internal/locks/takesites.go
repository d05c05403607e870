package locks

import (
	"slices"

	"golang.org/x/tools/go/ssa"
)

// A lock taken on every path, but at different places: `if cond == nil {
// return m.SeriesIDs() }; m.mu.RLock(); ...` read-locks m.mu on both
// branches, one through a call. Each take alone is on some paths only;
// together they are on every path, and a caller holding the lock
// deadlocks whichever branch runs (influxdb's Measurement.filters under
// TagSets' read lock). A take counts here when only the function's own
// branch makes it conditional (what it calls takes the lock for sure).

// siteKey groups takes of one lock.
type siteKey struct {
	path, class, sub string
	shared           bool
}

// noteSite records, in the final pass, the block of a take that is
// conditional only by this function's own branch.
func (w *walker) noteSite(tk take) {
	if !w.final || w.blk == nil || tk.own == 0 || tk.cond != tk.own || tk.loose || tk.afterRelease || tk.Class == "" {
		return
	}
	k := siteKey{tk.Path, tk.Class, tk.Sub, tk.Shared}
	if w.sites == nil {
		w.sites = map[siteKey][]*ssa.BasicBlock{}
	}
	w.sites[k] = append(w.sites[k], w.blk)
}

// mergeSites makes certain each take whose sites together lie on every
// path to a return.
func (w *walker) mergeSites() {
	for k, blocks := range w.sites {
		if len(blocks) < 2 {
			continue
		}
		if w.avoidableAll(func(b *ssa.BasicBlock) bool { return slices.Contains(blocks, b) }) {
			continue
		}
		for i, tk := range w.info.takes {
			if tk.Path == k.path && tk.Class == k.class && tk.Sub == k.sub && tk.Shared == k.shared && !tk.afterRelease && tk.cond == tk.own && tk.own > 0 {
				w.info.takes[i].cond, w.info.takes[i].own = 0, 0
				w.info.takes[i].branch, w.info.takes[i].ownBranch = 0, 0
			}
		}
	}
}
