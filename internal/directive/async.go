package directive

import (
	"fmt"
	"go/types"
	"slices"
	"strconv"
	"strings"
)

// The asynchronous APIs a user declares, with //confined:async at file
// level or with the -confined.async flag, name a function of some package
// and the argument it runs on another goroutine. Both are resolved here,
// against real packages, so that a typo is an error naming the closest
// match instead of an entry that silently matches nothing.

// parseAsyncArgs checks "PKG.FUNC argN" and stores N in d.Param.
func parseAsyncArgs(d *Directive, use string) *Problem {
	if len(d.Args) != 2 {
		return newProblem(d.owner(), CategoryArgs, d.Pos, d.End,
			"%s takes a function and the argument it runs on another goroutine, got %d arguments; usage: %s, e.g. %s example.com/pool.(*Pool).Submit arg0",
			d.Spelling, len(d.Args), use, d.Spelling)
	}
	n, ok := ParseArgIndex(d.Args[1].Text)
	if !ok {
		a := d.Args[1]
		return newProblem(d.owner(), CategoryArgs, a.Pos, argEnd(a, d.End),
			"%s: %q is not an argument index: write arg0 for the first argument (the receiver does not count)", d.Spelling, a.Text)
	}
	d.Param = n
	return nil
}

// ParseArgIndex parses "argN" (N >= 0).
func ParseArgIndex(s string) (int, bool) {
	digits, ok := strings.CutPrefix(s, "arg")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// funcRef is one reading of an API name: a package path, a type name (""
// for a function) and the function or method name.
type funcRef struct{ pkg, typ, member string }

// readFuncRef returns the readings of name. The forms are
// "pkgpath.Func", "pkgpath.(*T).Method", "(*pkgpath.T).Method" (as
// types.Func.FullName writes it) and "pkgpath.T.Method"; the star is
// optional everywhere, since a method is found on T or *T alike. A path
// whose last element holds dots (gopkg.in/yaml.v3) gives several readings.
func readFuncRef(name string) []funcRef {
	if rest, ok := strings.CutPrefix(name, "("); ok { // (*pkgpath.T).Method
		recv, member, ok := strings.Cut(rest, ").")
		recv = strings.TrimPrefix(recv, "*")
		i := strings.LastIndex(recv, ".")
		if !ok || i <= 0 {
			return nil
		}
		return []funcRef{{pkg: recv[:i], typ: recv[i+1:], member: member}}
	}
	if pkg, rest, ok := strings.Cut(name, ".("); ok { // pkgpath.(*T).Method
		typ, member, ok := strings.Cut(strings.TrimPrefix(rest, "*"), ").")
		if !ok {
			return nil
		}
		return []funcRef{{pkg: pkg, typ: typ, member: member}}
	}
	slash := strings.LastIndex(name, "/") + 1
	var refs []funcRef
	for i := slash; i < len(name); i++ {
		if name[i] != '.' {
			continue
		}
		rest := strings.Split(name[i+1:], ".")
		switch len(rest) {
		case 1:
			refs = append(refs, funcRef{pkg: name[:i], member: rest[0]})
		case 2:
			refs = append(refs, funcRef{pkg: name[:i], typ: rest[0], member: rest[1]})
		}
	}
	return refs
}

// ResolveAsync finds the function an asynchronous API name denotes among
// pkgs (by path) and checks that its argument arg (receiver excluded) is a
// function. On failure it returns nil and a sentence saying why, naming
// the closest match. known says whether any reading of name is a package
// in pkgs: a caller that sees only some packages skips names it cannot
// judge.
func ResolveAsync(name string, arg int, pkgs map[string]*types.Package) (fn *types.Func, why string, known bool) {
	refs := readFuncRef(name)
	if len(refs) == 0 {
		return nil, fmt.Sprintf("%q is not a function name: write pkgpath.Func or pkgpath.(*T).Method, e.g. example.com/pool.(*Pool).Submit", name), true
	}
	for _, ref := range refs {
		pkg := pkgs[ref.pkg]
		if pkg == nil {
			continue
		}
		known = true
		fn = lookupFunc(pkg, ref)
		if fn == nil {
			why = fmt.Sprintf("package %s has no %s%s", ref.pkg, ref.display(), closestFunc(pkg, ref))
			continue
		}
		if why = checkAsyncArg(fn, arg); why != "" {
			return nil, why, true
		}
		return fn, "", true
	}
	if !known {
		paths := make([]string, 0, len(pkgs))
		for p := range pkgs {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		why = fmt.Sprintf("no package %s is loaded (imported here)", refs[0].pkg)
		if s := suggest(refs[0].pkg, paths); s != "" {
			why += fmt.Sprintf("; did you mean %s?", s)
		}
	}
	return nil, why, known
}

func (r funcRef) display() string {
	if r.typ == "" {
		return "function " + r.member
	}
	return "method " + r.typ + "." + r.member
}

func lookupFunc(pkg *types.Package, ref funcRef) *types.Func {
	if ref.typ == "" {
		fn, _ := pkg.Scope().Lookup(ref.member).(*types.Func)
		return fn
	}
	tn, ok := pkg.Scope().Lookup(ref.typ).(*types.TypeName)
	if !ok {
		return nil
	}
	t := tn.Type()
	if !types.IsInterface(t) {
		t = types.NewPointer(t) // *T's method set holds T's methods too
	}
	sel := types.NewMethodSet(t).Lookup(pkg, ref.member)
	if sel == nil {
		return nil
	}
	fn, _ := sel.Obj().(*types.Func)
	return fn
}

// closestFunc names the function or method of pkg closest to ref, as
// "; did you mean pkgpath.(*T).M?" ("" when pkg has none).
func closestFunc(pkg *types.Package, ref funcRef) string {
	want := ref.member
	if ref.typ != "" {
		want = ref.typ + "." + ref.member
	}
	best, bestName, bestDist := "", "", maxCompareLen+1
	consider := func(fn *types.Func, key string) {
		if d := editDistance(strings.ToLower(want), strings.ToLower(key), maxCompareLen); d < bestDist || d == bestDist && key < bestName {
			best, bestName, bestDist = AsyncName(fn), key, d
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		switch obj := scope.Lookup(name).(type) {
		case *types.Func:
			consider(obj, name)
		case *types.TypeName:
			t := obj.Type()
			if !types.IsInterface(t) {
				t = types.NewPointer(t)
			}
			ms := types.NewMethodSet(t)
			for i := range ms.Len() {
				if m, ok := ms.At(i).Obj().(*types.Func); ok && m.Pkg() == pkg {
					consider(m, name+"."+m.Name())
				}
			}
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// AsyncName renders fn as the flag and the directive spell it:
// "example.com/pool.(*Pool).Submit", "example.com/pool.Go".
func AsyncName(fn *types.Func) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil || fn.Pkg() == nil {
		return fn.FullName()
	}
	recv := sig.Recv().Type()
	star := ""
	if p, ok := recv.(*types.Pointer); ok {
		recv, star = p.Elem(), "*"
	}
	if n, ok := types.Unalias(recv).(*types.Named); ok {
		return fn.Pkg().Path() + ".(" + star + n.Obj().Name() + ")." + fn.Name()
	}
	return fn.FullName()
}

// checkAsyncArg says why argument arg of fn cannot be a function run on
// another goroutine, or "".
func checkAsyncArg(fn *types.Func, arg int) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil {
		return ""
	}
	params := sig.Params()
	if arg >= params.Len() && !(sig.Variadic() && params.Len() > 0) {
		names := make([]string, params.Len())
		for i := range params.Len() {
			names[i] = fmt.Sprintf("arg%d %s", i, types.TypeString(params.At(i).Type(), types.RelativeTo(fn.Pkg())))
		}
		return fmt.Sprintf("%s takes %d arguments (%s), so it has no arg%d (arguments count from arg0; the receiver does not count)",
			AsyncName(fn), params.Len(), strings.Join(names, ", "), arg)
	}
	t := params.At(min(arg, params.Len()-1)).Type()
	if sig.Variadic() && arg >= params.Len()-1 {
		if s, ok := t.(*types.Slice); ok {
			t = s.Elem()
		}
	}
	if _, ok := t.Underlying().(*types.Signature); !ok {
		return fmt.Sprintf("arg%d of %s has type %s, not a function type", arg, AsyncName(fn), types.TypeString(t, types.RelativeTo(fn.Pkg())))
	}
	return ""
}

// placeAsync records a file-level //confined:async, resolved against this
// package and its imports.
func (c *collector) placeAsync(it item, st *site) {
	d := it.d
	fileLevel := st.kind == sitePackageClause || st.kind == siteNone && !it.file.inBody(it.comment.Slash)
	if !fileLevel {
		c.misplaced(d, onFile, 0, st.what)
		return
	}
	if c.pkg == nil {
		return // no type information to resolve against
	}
	if c.visible == nil {
		c.visible = VisiblePackages(c.pkg)
	}
	name := d.Args[0]
	fn, why, _ := ResolveAsync(name.Text, d.Param, c.visible)
	if fn == nil {
		c.report(d.owner(), CategoryAsync, name.Pos, d.End, "%s: %s", d.Spelling, why)
		return
	}
	c.set.Async = append(c.set.Async, AsyncDecl{Func: fn, Arg: d.Param, Pos: d.Pos})
}

// VisiblePackages maps the path of pkg and of every package it imports,
// directly or not, to the package.
func VisiblePackages(pkg *types.Package) map[string]*types.Package {
	m := map[string]*types.Package{}
	addVisible(m, pkg)
	return m
}

func addVisible(m map[string]*types.Package, pkg *types.Package) {
	if pkg == nil || m[pkg.Path()] != nil {
		return
	}
	m[pkg.Path()] = pkg
	for _, imp := range pkg.Imports() {
		addVisible(m, imp)
	}
}
