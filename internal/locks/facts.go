package locks

import (
	"go/types"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/objects"
)

// Facts use lock paths relative to the declaration, as facts.DeclItem does
// ("recv.mu", "param0.mu"), plus "g:pkgpath.var" for package vars; inside
// the engine paths are relative to SSA parameters ("p0.mu").

// toDeclPath renders an engine path for a fact; "" when not portable.
func toDeclPath(fn *ssa.Function, path string) string {
	root, rest := rootOf(path)
	if strings.HasPrefix(root, "g:") || objects.IsClassPath(path) {
		return path
	}
	i := paramIndex(root, "p")
	if i < 0 {
		return ""
	}
	if fn.Signature.Recv() != nil {
		if i == 0 {
			return "recv" + rest
		}
		i--
	}
	return "param" + strconv.Itoa(i) + rest
}

// fromDeclPath is the inverse of toDeclPath, also accepting "global" (a
// package var, whose class key is class) and "field." paths (relative to
// base, the path of the struct holding the field).
func fromDeclPath(sig *types.Signature, path, class, base string) string {
	off := 0
	if sig != nil && sig.Recv() != nil {
		off = 1
	}
	switch {
	case path == "global":
		return "g:" + class
	case strings.HasPrefix(path, "g:") || objects.IsClassPath(path):
		return path
	case path == "recv" || strings.HasPrefix(path, "recv."):
		return "p0" + path[len("recv"):]
	case strings.HasPrefix(path, "field."):
		if base == "" {
			return ""
		}
		return base + path[len("field"):]
	case strings.HasPrefix(path, "param"):
		root, rest, _ := strings.Cut(path, ".")
		if rest != "" {
			rest = "." + rest
		}
		if n := paramIndex(root, "param"); n >= 0 {
			return "p" + strconv.Itoa(n+off) + rest
		}
	}
	return ""
}

// shortClass is a class key without its package path: "Broker.mu".
func shortClass(class string) string {
	s := class[strings.LastIndexByte(class, '/')+1:]
	if _, after, ok := strings.Cut(s, "."); ok {
		return after
	}
	return s
}

// importedSummary reads the fact of another package's function.
func (e *engine) importedSummary(fn *ssa.Function) *funcInfo {
	if info, ok := e.imported[fn]; ok {
		return info
	}
	e.imported[fn] = nil
	obj, ok := fn.Object().(*types.Func)
	if !ok || obj.Pkg() == nil || obj.Pkg() == e.p.Pass.Pkg {
		return nil
	}
	var ls facts.LockSummary
	if !e.p.Pass.ImportObjectFact(obj.Origin(), &ls) {
		return nil
	}
	sig := fn.Signature
	info := &funcInfo{}
	for _, t := range ls.Takes {
		tk := take{Class: t.Class, Name: shortClass(t.Class), Shared: t.Shared, At: t.Pos, cond: t.Cond, branch: t.Branch, loose: t.Loose, several: t.Loose, Sub: t.Sub, fresh: t.Fresh}
		tk.Path = fromDeclPath(sig, t.Path, t.Class, "")
		if t.Via != "" {
			tk.Via = chainOf(strings.Split(t.Via, " -> "))
		}
		info.takes = append(info.takes, tk)
	}
	for _, ef := range ls.Effects {
		h := Hold{Path: fromDeclPath(sig, ef.Path, ef.Class, ""), Class: ef.Class, Name: shortClass(ef.Class), Shared: ef.Shared}
		if h.Path == "" {
			continue
		}
		switch {
		case ef.Try:
			info.tries = append(info.tries, tryAcquire{Hold: h, Result: ef.Result, Nil: ef.Nil})
		case ef.Release:
			info.releases = append(info.releases, h)
		default:
			info.acquires = append(info.acquires, h)
		}
	}
	e.imported[fn] = info
	return info
}

// exportFacts exports a LockSummary for every exported function with a
// lock effect, and the package's edges.
func (e *engine) exportFacts() {
	e.leaves = e.privateLeaves()
	for _, fn := range e.p.Funcs {
		obj, ok := fn.Object().(*types.Func)
		if !ok || fn.Parent() != nil || !obj.Exported() {
			continue
		}
		if ls := e.lockSummaryFact(fn); ls != nil {
			e.p.Pass.ExportObjectFact(obj, ls)
		}
	}
	if len(e.edges) > 0 {
		e.p.Pass.ExportPackageFact(e.edgesFact())
	}
	e.exportDispatches()
}

// privateLeaves returns the lock classes no other package can hold or
// order: declared here by an unexported variable or field, never left held
// or released for a caller by a function of the package, and never held
// while another lock is taken (no edge leaves them). An importer can make
// no finding with one: a caller cannot already hold it (no double lock),
// and an edge into it closes no cycle. So the facts leave their takes out:
// sync.Pool's allPoolsMu and sync.Once's m are such classes, taken under
// most of the standard library, and their takes were a third of the
// LockSummary facts every importer decodes.
func (e *engine) privateLeaves() map[string]bool {
	leaves := map[string]bool{}
	for class := range e.locals {
		leaves[class] = true // no other package can name a local (localclass.go)
	}
	for class, v := range e.classVars {
		if v.Pkg() == e.p.Pass.Pkg && !v.Exported() {
			leaves[class] = true
		}
	}
	for _, x := range e.edges {
		if !e.locals[x.From] {
			delete(leaves, x.From)
		}
	}
	e.dispatchedClasses(leaves)
	for _, info := range e.infos {
		for _, hs := range [][]Hold{info.acquires, info.releases} {
			for _, h := range hs {
				delete(leaves, h.Class)
			}
		}
		for _, t := range info.tries {
			delete(leaves, t.Class)
		}
	}
	return leaves
}

func (e *engine) lockSummaryFact(fn *ssa.Function) *facts.LockSummary {
	info := e.infos[fn]
	if info == nil || len(info.takes)+len(info.acquires)+len(info.releases)+len(info.tries) == 0 {
		return nil
	}
	ls := &facts.LockSummary{}
	for _, t := range info.takes {
		if t.afterRelease || t.deep || t.Class == "" || e.leaves[t.Class] {
			continue
		}
		at := t.At
		if at == "" {
			at = e.at(t.Pos)
		}
		ls.Takes = append(ls.Takes, facts.Take{Class: t.Class, Pos: at, Via: t.Via.text(), Path: toDeclPath(fn, t.Path), Shared: t.Shared, Cond: t.cond, Branch: t.branch, Loose: t.loose, Sub: t.Sub, Fresh: t.fresh})
	}
	sort.Slice(ls.Takes, func(i, j int) bool {
		a, b := ls.Takes[i], ls.Takes[j]
		if a.Class != b.Class {
			return a.Class < b.Class
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Shared != b.Shared {
			return !a.Shared
		}
		return a.Sub < b.Sub
	})
	add := func(hs []Hold, release bool) {
		var effs []facts.Effect
		for _, h := range hs {
			if p := toDeclPath(fn, h.Path); p != "" {
				effs = append(effs, facts.Effect{Path: p, Class: h.Class, Shared: h.Shared, Release: release})
			}
		}
		sort.Slice(effs, func(i, j int) bool { return effs[i].Path < effs[j].Path })
		for _, ef := range effs {
			if release {
				ls.Releases = append(ls.Releases, ef.Path)
			} else {
				ls.Acquires = append(ls.Acquires, ef.Path)
			}
		}
		ls.Effects = append(ls.Effects, effs...)
	}
	add(info.acquires, false)
	add(info.releases, true)
	var tries []facts.Effect
	for _, t := range info.tries {
		if p := toDeclPath(fn, t.Path); p != "" {
			tries = append(tries, facts.Effect{Path: p, Class: t.Class, Shared: t.Shared, Try: true, Result: t.Result, Nil: t.Nil})
		}
	}
	sort.Slice(tries, func(i, j int) bool { return tries[i].Path < tries[j].Path })
	ls.Effects = append(ls.Effects, tries...)
	if len(ls.Takes)+len(ls.Effects) == 0 {
		return nil
	}
	return ls
}
