package directive

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"
)

// resolve fills in what d's arguments name, for target t. It reports a
// problem and returns false when they name nothing usable.
func (c *collector) resolve(d Directive, t target, file *ast.File) (Directive, bool) {
	switch d.Verb {
	case Control, Drain, Commit, Serialized:
		return d, c.checkRole(d)
	case Spawns:
		return c.resolveSpawns(d, t)
	case GuardedBy:
		lock, ok := c.resolveLockArg(d, d.Args[0], c.declScope(t, file))
		d.Lock = lock
		return d, ok
	case Requires, RequiresShared, Acquires, AcquiresShared, Releases, ReleasesShared, Excludes, ExcludesWrite:
		sc := pathScope{fn: t.fn, fnName: t.name, file: file, results: d.Verb == Acquires || d.Verb == AcquiresShared}
		lock, ok := c.resolveLockArg(d, d.Args[0], sc)
		if ok && !lock.ReadWrite && (d.Verb == RequiresShared || d.Verb == AcquiresShared || d.Verb == ReleasesShared) {
			c.report(d.owner(), CategoryLock, d.Args[0].Pos, argEnd(d.Args[0], d.End),
				"%s: %s has no shared mode (no RLock/RUnlock); use %s", d.Spelling, lock.Text, exclusiveSpelling(d.Spelling))
			return d, false
		}
		d.Lock = lock
		return d, ok
	case Alias:
		return c.resolveAlias(d, t, file)
	case Before:
		return c.resolveBefore(d, t, file)
	}
	return d, true
}

// pathScope is where a lock path's first identifier is looked up.
type pathScope struct {
	structType types.Type // field directives: the struct the field is in
	structName string
	fn         *types.Func // func directives
	fnName     string
	results    bool // named results may start a path (acquires only)
	file       *ast.File
}

// declScope is the scope of field, struct type and package var directives.
func (c *collector) declScope(t target, file *ast.File) pathScope {
	return pathScope{structType: t.structType, structName: t.structName, file: file}
}

// resolveLockArg resolves a and reports why it fails to name a lock.
func (c *collector) resolveLockArg(d Directive, a Arg, sc pathScope) (*LockPath, bool) {
	lock, why := c.resolveLock(a.Text, sc)
	if lock == nil {
		c.report(d.owner(), CategoryLock, a.Pos, argEnd(a, d.End), "%s: %s", d.Spelling, why)
		return nil, false
	}
	return lock, true
}

// resolveLock resolves a dotted lock path. On failure it returns nil and
// a sentence saying why.
//
// The first identifier may name several things; they are tried in the
// documented order (a field of the struct or of the receiver, the receiver,
// a parameter, a named result, a package var, an import) and the first
// reading that reaches a lock wins. When none does, the failure of the
// reading that got furthest is the one explained.
func (c *collector) resolveLock(text string, sc pathScope) (*LockPath, string) {
	segs := strings.Split(text, ".")
	starts := c.pathStarts(segs, sc)
	if len(starts) == 0 {
		return nil, c.notFound(segs[0], sc)
	}
	bestWhy, bestProgress := "", -1
	for _, start := range starts {
		lp, why, progress := c.completePath(text, start)
		if lp != nil {
			return lp, ""
		}
		if progress > bestProgress {
			bestWhy, bestProgress = why, progress
		}
	}
	return nil, bestWhy
}

// pathStart is one reading of a path's first identifier (or two, for
// "pkg.var").
type pathStart struct {
	lp   LockPath
	cur  types.Type // the type reached when no field is selected yet
	rest []string   // the identifiers still to select
	done string     // the text consumed, for messages
}

func (c *collector) pathStarts(segs []string, sc pathScope) []pathStart {
	var recv *types.Var
	var params, results *types.Tuple
	if sc.fn != nil {
		if sig, ok := sc.fn.Type().(*types.Signature); ok {
			recv, params, results = sig.Recv(), sig.Params(), sig.Results()
		}
	}
	if !sc.results {
		results = nil
	}
	first, rest := segs[0], segs[1:]
	var starts []pathStart
	add := func(lp LockPath, cur types.Type) {
		starts = append(starts, pathStart{lp: lp, cur: cur, rest: rest, done: first})
	}
	if chain := c.fieldChain(sc.structType, first); chain != nil {
		add(LockPath{Root: RootField, Fields: chain}, nil)
	}
	// The function's own names first, as Go scopes them: in a method of a
	// type with a field h, "h.ep.mu" on a result named h is the result's.
	if recv != nil && recv.Name() == first {
		add(LockPath{Root: RootReceiver}, recv.Type())
	}
	if i := tupleIndex(params, first); i >= 0 {
		add(LockPath{Root: RootParam, Param: i}, params.At(i).Type())
	}
	if i := tupleIndex(results, first); i >= 0 {
		add(LockPath{Root: RootResult, Param: i}, results.At(i).Type())
	}
	if chain := c.fieldChain(varType(recv), first); chain != nil {
		add(LockPath{Root: RootReceiver, Fields: chain}, nil) // "requires mu" on a method means recv.mu
	}
	if v := c.packageVar(first); v != nil {
		add(LockPath{Root: RootGlobal, Global: v}, v.Type())
	}
	if v := c.importedVar(sc.file, segs); v != nil {
		starts = append(starts, pathStart{lp: LockPath{Root: RootGlobal, Global: v}, cur: v.Type(),
			rest: segs[2:], done: segs[0] + "." + segs[1]})
	}
	return starts
}

// completePath selects the rest of the path from start and checks that it
// ends at a lock. On failure, progress counts the identifiers it got past.
func (c *collector) completePath(text string, start pathStart) (_ *LockPath, why string, progress int) {
	lp := start.lp
	lp.Text = text
	lp.Fields = slices.Clone(lp.Fields)
	cur, done := start.cur, start.done
	for i, seg := range start.rest {
		if n := len(lp.Fields); n > 0 {
			cur = lp.Fields[n-1].Type()
		}
		chain := c.fieldChain(cur, seg)
		if chain == nil {
			return nil, fmt.Sprintf("%s has no field %s (type %s)", done, seg, c.typeString(cur)), i
		}
		lp.Fields = append(lp.Fields, chain...)
		done += "." + seg
	}
	if n := len(lp.Fields); n > 0 {
		cur = lp.Fields[n-1].Type()
		lp.Class = lp.Fields[n-1].Origin()
	} else if lp.Global != nil {
		lp.Class = lp.Global
	}
	if !isLock(cur) {
		return nil, fmt.Sprintf("%s is not a lock (type %s); a lock has Lock() and Unlock() methods", text, c.typeString(cur)),
			len(start.rest) + 1
	}
	lp.ReadWrite = hasMethods(cur, "RLock", "RUnlock")
	return &lp, "", 0
}

// notFound explains which names a path's first identifier was tried as.
func (c *collector) notFound(name string, sc pathScope) string {
	var tried, candidates []string
	if sc.structType != nil {
		tried = append(tried, "a field of "+sc.structName)
		candidates = append(candidates, fieldNames(sc.structType)...)
	}
	if sc.fn != nil {
		if sig, ok := sc.fn.Type().(*types.Signature); ok {
			if recv := sig.Recv(); recv != nil {
				tried = append(tried, "a receiver field", "the receiver")
				candidates = append(candidates, fieldNames(recv.Type())...)
				candidates = append(candidates, recv.Name())
			}
			tried = append(tried, "a parameter")
			candidates = append(candidates, tupleNames(sig.Params())...)
			if sc.results {
				tried = append(tried, "a named result")
				candidates = append(candidates, tupleNames(sig.Results())...)
			}
		}
	}
	tried = append(tried, "a package-level var")
	candidates = append(candidates, c.packageVarNames()...)
	where := ""
	switch {
	case sc.fn != nil:
		where = " of " + sc.fnName
	case sc.structType == nil && c.pkg != nil:
		where = " of package " + c.pkg.Name()
	}
	msg := fmt.Sprintf("%s is not %s%s", name, joinOr(tried), where)
	if s := suggest(name, candidates); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	return msg
}

// fieldChain selects field name in t (through pointers and embedded
// structs) and returns every field selected on the way, or nil.
func (c *collector) fieldChain(t types.Type, name string) []*types.Var {
	if t == nil {
		return nil
	}
	obj, index, _ := types.LookupFieldOrMethod(t, true, c.pkg, name)
	if obj == nil {
		// An unexported field of another package's type is found only
		// with that package.
		if named, ok := types.Unalias(deref(t)).(*types.Named); ok && named.Obj().Pkg() != c.pkg {
			obj, index, _ = types.LookupFieldOrMethod(t, true, named.Obj().Pkg(), name)
		}
	}
	if v, ok := obj.(*types.Var); !ok || !v.IsField() {
		return nil
	}
	chain := make([]*types.Var, 0, len(index))
	cur := t
	for _, i := range index {
		st, ok := deref(cur).Underlying().(*types.Struct)
		if !ok || i < 0 || i >= st.NumFields() {
			return nil
		}
		f := st.Field(i)
		chain = append(chain, f)
		cur = f.Type()
	}
	if len(chain) == 0 {
		return nil
	}
	return chain
}

// packageVarNames lists the package-level vars, sorted, for suggestions.
// It is computed once: a package with many unresolved paths would
// otherwise sort its scope again for each.
func (c *collector) packageVarNames() []string {
	if c.varNames == nil && c.pkg != nil {
		c.varNames = []string{}
		for _, name := range c.pkg.Scope().Names() {
			if _, ok := c.pkg.Scope().Lookup(name).(*types.Var); ok {
				c.varNames = append(c.varNames, name)
			}
		}
	}
	return c.varNames
}

func (c *collector) packageVar(name string) *types.Var {
	if c.pkg == nil {
		return nil
	}
	v, _ := c.pkg.Scope().Lookup(name).(*types.Var)
	return v
}

// importedVar resolves "pkg.name" where pkg is an import name of file.
func (c *collector) importedVar(file *ast.File, segs []string) *types.Var {
	if file == nil || len(segs) < 2 {
		return nil
	}
	for _, spec := range file.Imports {
		if spec == nil {
			continue
		}
		var obj types.Object
		if spec.Name != nil {
			obj = c.info.Defs[spec.Name]
		} else {
			obj = c.info.Implicits[spec]
		}
		pn, ok := obj.(*types.PkgName)
		if !ok || pn.Name() != segs[0] || pn.Imported() == nil {
			continue
		}
		v, _ := pn.Imported().Scope().Lookup(segs[1]).(*types.Var)
		return v
	}
	return nil
}

// isLock reports whether a value of type t can be locked: it has Lock()
// and Unlock() (as sync.Locker), as a value, through a pointer to it, or
// as an interface. The method set decides, never the type's name.
func isLock(t types.Type) bool {
	return hasMethods(t, "Lock", "Unlock")
}

// hasMethods reports whether an addressable t has each named method with
// no parameters and no results.
func hasMethods(t types.Type, names ...string) bool {
	if t == nil {
		return false
	}
	for _, name := range names {
		fn, ok := lookupMethod(t, name)
		if !ok {
			return false
		}
		sig, ok := fn.Type().(*types.Signature)
		if !ok || sig.Params().Len() != 0 || sig.Results().Len() != 0 {
			return false
		}
	}
	return true
}

func lookupMethod(t types.Type, name string) (*types.Func, bool) {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, name)
	fn, ok := obj.(*types.Func)
	return fn, ok
}

func (c *collector) resolveSpawns(d Directive, t target) (Directive, bool) {
	a := d.Args[0]
	sig, _ := t.fn.Type().(*types.Signature)
	if sig == nil {
		return d, false
	}
	i := tupleIndex(sig.Params(), a.Text)
	if i < 0 {
		msg := fmt.Sprintf("%s: %s has no parameter %s", d.Spelling, t.name, a.Text)
		s := suggest(a.Text, tupleNames(sig.Params()))
		if s != "" {
			msg += fmt.Sprintf("; did you mean %s?", s)
		}
		c.reportFix(d.owner(), CategoryParam, a, d.End, s, "%s", msg)
		return d, false
	}
	if _, isFunc := sig.Params().At(i).Type().Underlying().(*types.Signature); !isFunc {
		c.report(d.owner(), CategoryParam, a.Pos, argEnd(a, d.End),
			"%s: parameter %s has type %s, not a function type", d.Spelling, a.Text, c.typeString(sig.Params().At(i).Type()))
		return d, false
	}
	d.Param = i
	return d, true
}

// checkRole reports a role that no entry declares, here or in an import.
func (c *collector) checkRole(d Directive) bool {
	if c.localRoles[d.Role] || (c.importedRoles != nil && c.importedRoles(d.Role)) {
		return true
	}
	pos, end := d.Pos, d.End
	if len(d.Args) > 0 {
		pos, end = d.Args[0].Pos, argEnd(d.Args[0], d.End)
	}
	msg := fmt.Sprintf("role %q is not declared by any //confined:entry in this package or its imports", d.Role)
	known := make([]string, 0, len(c.localRoles))
	for r := range c.localRoles {
		known = append(known, r)
	}
	slices.Sort(known)
	s := suggest(d.Role, known)
	if s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	if len(d.Args) == 0 {
		s = "" // nothing written to correct
	}
	p := newProblem(d.owner(), CategoryRole, pos, end, "%s", msg)
	if s != "" {
		p.Fix = &Edit{Pos: pos, End: end, Text: s}
	}
	c.set.Problems = append(c.set.Problems, *p)
	return false
}

// resolveAlias resolves A=B on a struct type. Two paths can name one lock
// only if one of them reaches it through a pointer or interface: two
// values inside the same struct are two locks.
func (c *collector) resolveAlias(d Directive, t target, file *ast.File) (Directive, bool) {
	sc := c.declScope(t, file)
	a, okA := c.resolveLockArg(d, d.Args[0], sc)
	b, okB := c.resolveLockArg(d, d.Args[1], sc)
	if !okA || !okB {
		return d, false
	}
	switch {
	case samePath(a, b):
		c.report(d.owner(), CategoryLock, d.Args[0].Pos, d.End, "%s: %s and %s are the same lock already", d.Spelling, a.Text, b.Text)
		return d, false
	case !viaReference(a) && !viaReference(b):
		c.report(d.owner(), CategoryLock, d.Args[0].Pos, d.End,
			"%s: %s and %s are two different locks inside every %s value; one of them must be reached through a pointer or be a sync.Locker",
			d.Spelling, a.Text, b.Text, strings.TrimPrefix(t.structName, "struct "))
		return d, false
	}
	d.Lock, d.AliasOf = a, b
	return d, true
}

// viaReference reports whether a field path dereferences a pointer or
// interface on its way, so that it can share a lock with another path.
func viaReference(lp *LockPath) bool {
	for _, f := range lp.Fields {
		switch f.Type().Underlying().(type) {
		case *types.Pointer, *types.Interface:
			return true
		}
	}
	return false
}

// resolveBefore resolves "before OTHER" on a lock field or var.
func (c *collector) resolveBefore(d Directive, t target, file *ast.File) (Directive, bool) {
	if !isLock(t.obj.Type()) {
		c.report(d.owner(), CategoryPlacement, d.Pos, d.End,
			"%s belongs on a lock field or var; %s has type %s", d.Spelling, t.name, c.typeString(t.obj.Type()))
		return d, false
	}
	other, ok := c.resolveLockArg(d, d.Args[0], c.declScope(t, file))
	if !ok {
		return d, false
	}
	if other.Class == t.obj && (other.Root == RootGlobal || len(other.Fields) == 1) {
		c.report(d.owner(), CategoryLock, d.Args[0].Pos, argEnd(d.Args[0], d.End),
			"%s: a lock cannot be ordered before itself", d.Spelling)
		return d, false
	}
	d.Lock = other
	return d, true
}

// samePath reports whether two resolved paths name the same lock.
func samePath(a, b *LockPath) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Root != b.Root || a.Global != b.Global || !slices.Equal(a.Fields, b.Fields) {
		return false
	}
	return (a.Root != RootParam && a.Root != RootResult) || a.Param == b.Param
}

// exclusiveSpelling is the exclusive form of a shared lock verb.
func exclusiveSpelling(spelling string) string {
	if strings.HasPrefix(spelling, "+") {
		return strings.TrimSuffix(spelling, "read")
	}
	return strings.TrimSuffix(spelling, "_shared")
}

func (c *collector) typeString(t types.Type) string {
	if t == nil {
		return "unknown"
	}
	return types.TypeString(t, types.RelativeTo(c.pkg))
}

func varType(v *types.Var) types.Type {
	if v == nil {
		return nil
	}
	return v.Type()
}

func deref(t types.Type) types.Type {
	if p, ok := types.Unalias(t).Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// tupleIndex returns the index of the variable called name, or -1.
func tupleIndex(tuple *types.Tuple, name string) int {
	if tuple == nil || name == "_" {
		return -1
	}
	for i := range tuple.Len() {
		if tuple.At(i).Name() == name {
			return i
		}
	}
	return -1
}

func tupleNames(tuple *types.Tuple) []string {
	var names []string
	if tuple == nil {
		return nil
	}
	for v := range tuple.Variables() {
		if v.Name() != "" && v.Name() != "_" {
			names = append(names, v.Name())
		}
	}
	return names
}

// fieldNames lists the direct fields of a struct type or pointer to one.
func fieldNames(t types.Type) []string {
	if t == nil {
		return nil
	}
	st, ok := deref(t).Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	var names []string
	for f := range st.Fields() {
		names = append(names, f.Name())
	}
	return names
}

func joinOr(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
