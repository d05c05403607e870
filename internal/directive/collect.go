package directive

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// Collect parses every comment of files and attaches each directive to the
// object it applies to, resolving lock paths, roles and parameters against
// pkg and info. importedRoles reports whether an imported package declares
// a role (nil: none does). Misplaced, malformed, unresolvable and
// conflicting directives become Problems. Collect never panics, also not
// on files with syntax or type errors: what info lacks is skipped.
func Collect(fset *token.FileSet, files []*ast.File, pkg *types.Package, info *types.Info, importedRoles func(string) bool) *Set {
	if info == nil {
		info = &types.Info{}
	}
	c := &collector{
		fset:          fset,
		pkg:           pkg,
		info:          info,
		importedRoles: importedRoles,
		set:           &Set{Objects: make(map[types.Object][]Directive)},
		claims:        make(map[*ast.CommentGroup]*site),
		localRoles:    map[string]bool{DefaultRole: true},
	}
	var items []item
	var parsed []parseProblem
	for _, f := range files {
		if f == nil {
			continue
		}
		first := len(items)
		for _, g := range f.Comments {
			if g == nil {
				continue
			}
			for _, cm := range g.List {
				if cm == nil {
					continue
				}
				d, ok, p := Parse(cm.Text, cm.Slash)
				if p != nil {
					parsed = append(parsed, parseProblem{len(c.set.Problems), g})
					c.set.Problems = append(c.set.Problems, *p)
				}
				if ok && p == nil {
					items = append(items, item{d: d, comment: cm, group: g})
					if p2 := secondDirective(d, cm.Text, cm.Slash); p2 != nil {
						c.set.Problems = append(c.set.Problems, *p2)
					}
				}
			}
		}
		// Index the file's declarations only when it has directives to
		// place: most files have none, and the index walks every node.
		if first < len(items) {
			fx := c.indexFile(f)
			for i := first; i < len(items); i++ {
				items[i].file = fx
			}
		}
	}
	// Roles are declared by entries anywhere in the package, so gather them
	// before checking any use. A misplaced entry still declares its role:
	// its own problem is enough, without one more per use.
	for _, it := range items {
		if it.d.Verb == Entry {
			c.localRoles[it.d.Role] = true
		}
	}
	for _, it := range items {
		c.place(it)
	}
	c.checkReadAny()
	for _, pp := range parsed {
		if st := c.claims[pp.group]; st != nil && len(st.targets) > 0 {
			c.relateToDecl(pp.index, pp.index+1, st.targets[0])
		}
	}
	c.finish()
	return c.set
}

// parseProblem is a malformed directive's problem (by index) and its
// comment group, related to the declaration the group documents once the
// declarations are indexed.
type parseProblem struct {
	index int
	group *ast.CommentGroup
}

// item is one parsed, well-formed directive awaiting placement.
type item struct {
	d       Directive
	comment *ast.Comment
	group   *ast.CommentGroup
	file    *fileIndex
}

type collector struct {
	fset          *token.FileSet
	pkg           *types.Package
	info          *types.Info
	importedRoles func(string) bool
	set           *Set
	claims        map[*ast.CommentGroup]*site
	localRoles    map[string]bool
	varNames      []string // package-level var names, computed on first use
	// guardsWritten: the lock arguments of the guards written on each
	// field, resolved or not (see checkReadAny).
	guardsWritten map[types.Object][]string
	// visible maps the path of this package and of every package it
	// imports, directly or not, to the package: what //confined:async may
	// name. Computed on first use.
	visible map[string]*types.Package
}

// place attaches one directive according to where it was written.
func (c *collector) place(it item) {
	d := it.d
	st := c.claims[it.group]
	if st == nil {
		st = &site{kind: siteNone, file: it.file.file, what: it.file.unattached(it.comment.Slash)}
	}
	if st.asVar != nil && strings.HasPrefix(d.Spelling, "+") {
		st = st.asVar // checklocks annotations may trail a package var
	}
	switch {
	case d.Verb == Ignore:
		c.placeIgnore(it, st)
		return
	case d.Verb == Async:
		c.placeAsync(it, st)
		return
	case d.Verb == Force && st.kind != siteFunc:
		c.placeForce(it, st)
		return
	case d.Verb == GuardedBy && st.kind == siteFunc && d.Spelling == "+checklocks":
		d.Verb = Requires // checklocks reads +checklocks on a func as "caller holds"
	}
	spec, _ := specOf(d.Verb)
	if len(st.targets) == 0 {
		c.misplaced(d, spec.places, 0, st.what)
		return
	}
	for _, t := range st.targets {
		n := len(c.set.Problems)
		c.placeOn(d, t, st, spec)
		c.relateToDecl(n, len(c.set.Problems), t)
	}
}

// relateToDecl names target t as the declaration of the problems with
// index in [from, to) (checklocks reports them there; they stay on the
// comment).
func (c *collector) relateToDecl(from, to int, t target) {
	if t.obj == nil {
		return
	}
	for i := from; i < to; i++ {
		c.set.Problems[i].Decl, c.set.Problems[i].DeclName = t.obj.Pos(), t.obj.Name()
	}
}

// placeOn attaches d to one target of its site.
func (c *collector) placeOn(d Directive, t target, st *site, spec verbSpec) {
	if at := t.placement(st.kind); spec.places&at == 0 {
		c.misplaced(d, spec.places, at, t.what(st))
		return
	}
	if t.obj == nil {
		return // no type information to attach to
	}
	if d.Verb == GuardedBy {
		c.noteGuard(t.obj, d.Args[0].Text)
	}
	if rd, ok := c.resolve(d, t, st.file); ok {
		c.attach(t, rd)
	}
}

// placeIgnore records a suppression: on a declaration it covers the whole
// declaration; elsewhere it covers one line.
func (c *collector) placeIgnore(it item, st *site) {
	d := it.d
	if st.kind == siteField && strings.HasPrefix(d.Spelling, "+") {
		// On a field, +checklocksignore is a property of the field (no
		// atomic checks, no inference), not a suppression.
		for _, t := range st.targets {
			if t.obj != nil {
				c.attach(t, d)
			}
		}
		return
	}
	ig := &IgnoreComment{Pos: d.Pos, Reason: d.Reason, Spelling: d.Spelling}
	if strings.HasPrefix(d.Spelling, "+") {
		// The checklocks spelling silences lockorder, checklocks' successor,
		// only; and checklocks never calls one unused.
		ig.Analyzers = []string{LockOrder}
		ig.Property = true
	}
	var at token.Pos
	switch st.kind {
	case siteNone:
		var ok bool
		if at, ok = c.statementLine(it); !ok {
			c.dangling(d, "a declaration's doc comment")
			return
		}
	case sitePackageClause:
		c.misplaced(d, onStatement|onDecl, 0, st.what)
		return
	default:
		ig.DeclPos, ig.DeclEnd = st.decl.Pos(), st.decl.End()
		at = st.decl.Pos()
	}
	if c.fset != nil {
		posn := c.fset.Position(at)
		ig.File, ig.Line = posn.Filename, posn.Line
	}
	c.set.Ignores = append(c.set.Ignores, ig)
}

// placeForce records a statement-level +checklocksforce.
func (c *collector) placeForce(it item, st *site) {
	d := it.d
	switch st.kind {
	case siteNone, siteLocalVar, siteTrailingSpec:
		if at, ok := c.statementLine(it); ok {
			if c.fset != nil {
				d.Line = c.fset.Position(at).Line
			}
			c.set.Forces = append(c.set.Forces, d)
			return
		}
		if st.kind == siteNone {
			c.dangling(d, "a func's doc comment")
			return
		}
	}
	spec, _ := specOf(Force)
	c.misplaced(d, spec.places, 0, st.what)
}

// statementLine finds the line a statement-level directive applies to: its
// own line when it trails code, else the line right after its comment
// group when that line starts with code. It returns a position on that
// line.
func (c *collector) statementLine(it item) (token.Pos, bool) {
	fx := it.file
	line := fx.line(it.comment.Slash)
	if line == 0 {
		return token.NoPos, false
	}
	if p, ok := fx.firstCode[line]; ok && p < it.comment.Slash {
		return it.comment.Slash, true
	}
	if p, ok := fx.firstStart[fx.line(it.group.End())+1]; ok && fx.line(it.group.End()) > 0 {
		return p, true
	}
	return token.NoPos, false
}

// dangling reports a statement-level directive with no statement to apply
// to: a blank line, a closing brace or the end of the file follows it.
func (c *collector) dangling(d Directive, declForm string) {
	c.report(d.owner(), CategoryPlacement, d.Pos, d.End,
		"%s applies to nothing here: put it on the line directly above a statement, at the end of the statement's line, or in %s",
		d.Spelling, declForm)
}

// misplaced reports a directive written where its verb means nothing. at
// is the position it was written on, when that is one a verb may occupy.
func (c *collector) misplaced(d Directive, allowed, at placement, where string) {
	msg := fmt.Sprintf("%s is not allowed on %s; it belongs on %s", d.Spelling, where, allowed)
	msg += placementHint(d, at)
	c.report(d.owner(), CategoryPlacement, d.Pos, d.End, "%s", msg)
}

// placementHint names the verb that was probably meant: the lock verbs
// come in a field form and a func form.
func placementHint(d Directive, at placement) string {
	checklocks := strings.HasPrefix(d.Spelling, "+")
	switch {
	case at == onFunc && d.Verb == GuardedBy:
		return " (on a func, use //confined:requires)"
	case at&(onField|onPackageVar) != 0 && isFuncLockVerb(d.Verb) && checklocks && d.Verb == RequiresShared:
		return " (on a field, +checklocks covers both reads and writes)"
	case at&(onField|onPackageVar) != 0 && isFuncLockVerb(d.Verb) && checklocks:
		return " (on a field or var, use +checklocks)"
	case at&(onField|onPackageVar) != 0 && isFuncLockVerb(d.Verb):
		return " (on a field or var, use //confined:guardedby)"
	}
	return ""
}

func (c *collector) report(analyzer, category string, pos, end token.Pos, format string, args ...any) {
	c.set.Problems = append(c.set.Problems, *newProblem(analyzer, category, pos, end, format, args...))
}

// reportFix reports a problem with argument a whose correction, when fix
// is not "", replaces a's text with fix.
func (c *collector) reportFix(analyzer, category string, a Arg, commentEnd token.Pos, fix string, format string, args ...any) {
	end := argEnd(a, commentEnd)
	p := newProblem(analyzer, category, a.Pos, end, format, args...)
	if fix != "" {
		p.Fix = &Edit{Pos: a.Pos, End: end, Text: fix}
	}
	c.set.Problems = append(c.set.Problems, *p)
}

// finish puts every list in a deterministic order.
func (c *collector) finish() {
	roles := map[string]bool{}
	for obj, ds := range c.set.Objects {
		slices.SortStableFunc(ds, func(a, b Directive) int { return cmp.Compare(a.Pos, b.Pos) })
		c.set.Objects[obj] = ds
		for _, d := range ds {
			if d.Verb == Entry {
				roles[d.Role] = true
			}
		}
	}
	for r := range roles {
		c.set.Roles = append(c.set.Roles, r)
	}
	slices.Sort(c.set.Roles)
	slices.SortStableFunc(c.set.Ignores, func(a, b *IgnoreComment) int { return cmp.Compare(a.Pos, b.Pos) })
	slices.SortStableFunc(c.set.Forces, func(a, b Directive) int { return cmp.Compare(a.Pos, b.Pos) })
	slices.SortFunc(c.set.Problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Pos, b.Pos), cmp.Compare(a.End, b.End),
			cmp.Compare(a.Analyzer, b.Analyzer), cmp.Compare(a.Category, b.Category),
			cmp.Compare(a.Message, b.Message))
	})
	// One directive on several names (var a, b int) reports a shared
	// problem once.
	c.set.Problems = slices.CompactFunc(c.set.Problems, func(a, b Problem) bool {
		return a.Pos == b.Pos && a.End == b.End && a.Analyzer == b.Analyzer && a.Category == b.Category && a.Message == b.Message
	})
}
