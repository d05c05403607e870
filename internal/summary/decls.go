package summary

import (
	"go/types"
	"slices"
	"sort"
	"strconv"

	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/lockop"
)

// exportDecls turns the package's directives into Decl facts, exports them
// (so importers see them) and the package's entry roles, and returns them
// for in-package lookup.
func exportDecls(pass *analysis.Pass, set *directive.Set) map[types.Object]*facts.Decl {
	decls := map[types.Object]*facts.Decl{}
	roles := map[string]bool{}
	for obj, ds := range set.Objects {
		d := &facts.Decl{}
		for _, dir := range ds {
			d.Items = append(d.Items, declItem(dir))
			if dir.Verb == directive.Entry {
				roles[dir.Role] = true
			}
		}
		sort.Slice(d.Items, func(i, j int) bool { return lessItem(d.Items[i], d.Items[j]) })
		decls[obj] = d
		if obj.Pkg() == pass.Pkg && len(d.Items) > 0 {
			pass.ExportObjectFact(obj, d)
		}
	}
	if len(roles) > 0 {
		r := &facts.Roles{}
		for n := range roles {
			r.Names = append(r.Names, n)
		}
		sort.Strings(r.Names)
		pass.ExportPackageFact(r)
	}
	return decls
}

func declItem(dir directive.Directive) facts.DeclItem {
	it := facts.DeclItem{Verb: string(dir.Verb), Role: dir.Role, Param: dir.Param}
	if dir.Lock != nil {
		it.Lock = relativePath(dir.Lock)
		it.LockClass = lockop.ClassKey(dir.Lock.Class)
		it.LockText = dir.Lock.Text
	}
	return it
}

// relativePath renders a lock path relative to its declaration, so it means
// the same thing in another package: "recv.mu", "param1.state.mu",
// "field.mu", "global", or "g:KEY.f.mu" for a field path from a package
// var (KEY its lockop.ClassKey), which no caller rewrites.
func relativePath(lp *directive.LockPath) string {
	s := ""
	switch lp.Root {
	case directive.RootReceiver:
		s = "recv"
	case directive.RootParam:
		s = "param" + strconv.Itoa(lp.Param)
	case directive.RootField:
		s = "field"
	case directive.RootResult:
		s = "result" + strconv.Itoa(lp.Param)
	case directive.RootGlobal:
		if len(lp.Fields) == 0 {
			return "global"
		}
		s = "g:" + lockop.ClassKey(lp.Global)
	}
	for _, f := range lp.Fields {
		s += "." + f.Name()
	}
	return s
}

func lessItem(a, b facts.DeclItem) bool {
	if a.Verb != b.Verb {
		return a.Verb < b.Verb
	}
	if a.Role != b.Role {
		return a.Role < b.Role
	}
	return a.LockText < b.LockText
}

// exportAsync exports the package's //confined:async declarations, so that
// its importers see the same asynchronous APIs.
func exportAsync(pass *analysis.Pass, set *directive.Set) {
	if len(set.Async) == 0 {
		return
	}
	f := &facts.AsyncAPIs{}
	for _, d := range set.Async {
		f.APIs = append(f.APIs, facts.AsyncAPI{Func: d.Func.FullName(), Arg: d.Arg})
	}
	sort.Slice(f.APIs, func(i, j int) bool {
		a, b := f.APIs[i], f.APIs[j]
		return a.Func < b.Func || a.Func == b.Func && a.Arg < b.Arg
	})
	f.APIs = slices.Compact(f.APIs)
	pass.ExportPackageFact(f)
}
