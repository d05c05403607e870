package directive

import (
	"cmp"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
)

// siteKind says what a comment group is attached to.
type siteKind uint8

const (
	siteNone            siteKind = iota // nothing: free-floating, or inside a function body
	sitePackageClause                   // the package clause's doc
	siteImport                          // an import declaration
	siteConst                           // a const declaration
	siteFunc                            // a func or method declaration
	siteType                            // a type declaration (each target says whether it is a struct)
	sitePackageVar                      // a package-level var declaration
	siteLocalVar                        // a var declaration inside a function body
	siteField                           // a struct field (doc or trailing comment)
	siteInterfaceMethod                 // an interface method or embedded interface
	siteTrailingSpec                    // a comment trailing a var, const, type or import spec
)

// site is the declaration a comment group documents.
type site struct {
	kind siteKind
	file *ast.File
	// decl is the documented declaration, for the span an ignore covers.
	decl ast.Node
	// what describes the position in messages ("a const declaration").
	what    string
	targets []target
	// asVar: for a comment trailing a package var spec, the var's own
	// site; checklocks spellings apply there (checklocks reads them so).
	asVar *site
}

// target is one object a directive on a site applies to, with what its
// arguments resolve against.
type target struct {
	obj  types.Object // nil when type information is missing
	name string       // for messages: "func (*Conn).Close", "field Conn.count"
	// structType is where field-relative lock paths start: the field's
	// struct, or the struct type itself.
	structType types.Type
	structName string // for messages: "struct Conn"
	// enclosing is the named struct type a field belongs to.
	enclosing *types.TypeName
	fn        *types.Func
	nonStruct bool // a type whose underlying type is not a struct
}

// placement is the position bit t occupies on a site of kind k.
func (t target) placement(k siteKind) placement {
	switch k {
	case siteFunc:
		return onFunc
	case siteType:
		if t.nonStruct {
			return 0
		}
		return onStructType
	case sitePackageVar:
		return onPackageVar
	case siteField:
		return onField
	}
	return 0
}

func (t target) what(st *site) string {
	if st.kind == siteType && t.nonStruct {
		return "non-struct " + t.name
	}
	return t.name
}

// fileIndex is what placement needs to know about one file's layout.
type fileIndex struct {
	file *ast.File
	tf   *token.File
	// firstCode maps a line to the first byte of code on it (where a node
	// starts or ends), to tell a trailing comment from one on its own line.
	firstCode map[int]token.Pos
	// firstStart maps a line to the first node that starts on it: a
	// statement-level directive on its own line applies to such a line.
	firstStart map[int]token.Pos
	// bodies are the outermost function bodies, {Lbrace, Rbrace}, in
	// source order.
	bodies [][2]token.Pos
}

// line returns the line of p in this file, or 0 when p is not in it.
func (fx *fileIndex) line(p token.Pos) int {
	if fx.tf == nil || !p.IsValid() || int(p) < fx.tf.Base() || int(p) > fx.tf.Base()+fx.tf.Size() {
		return 0
	}
	return fx.tf.Line(p)
}

// unattached describes the position of a comment that documents no
// declaration, for messages.
func (fx *fileIndex) unattached(p token.Pos) string {
	if fx.inBody(p) {
		return "a statement"
	}
	return "a comment attached to no declaration (a directive goes in the doc comment directly above a declaration, with no blank line between)"
}

// inBody reports whether p lies inside a function body. The outermost
// bodies are disjoint and in source order: only the last one starting
// before p can hold it.
func (fx *fileIndex) inBody(p token.Pos) bool {
	i, _ := slices.BinarySearchFunc(fx.bodies, p, func(b [2]token.Pos, p token.Pos) int { return cmp.Compare(b[0], p) })
	return i > 0 && fx.bodies[i-1][1] >= p
}

func (fx *fileIndex) noteCode(n ast.Node) {
	start, end := n.Pos(), n.End()
	if l := fx.line(start); l > 0 {
		setEarliest(fx.firstStart, l, start)
		setEarliest(fx.firstCode, l, start)
	}
	if end > start {
		if l := fx.line(end - 1); l > 0 {
			setEarliest(fx.firstCode, l, end-1)
		}
	}
}

func setEarliest(m map[int]token.Pos, line int, p token.Pos) {
	if q, ok := m[line]; !ok || p < q {
		m[line] = p
	}
}

// indexFile claims every doc and trailing comment group of f for its
// declaration and records the file's layout.
func (c *collector) indexFile(f *ast.File) *fileIndex {
	fx := &fileIndex{file: f, firstCode: map[int]token.Pos{}, firstStart: map[int]token.Pos{}}
	if c.fset != nil {
		if fx.tf = c.fset.File(f.FileStart); fx.tf == nil {
			fx.tf = c.fset.File(f.Pos())
		}
	}
	c.claim(f.Doc, &site{kind: sitePackageClause, file: f, decl: f, what: "the package clause"})
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			c.claimFunc(f, decl)
			if decl.Body != nil {
				fx.bodies = append(fx.bodies, [2]token.Pos{decl.Body.Lbrace, decl.Body.Rbrace})
			}
		case *ast.GenDecl:
			c.claimGenDecl(f, decl, true)
			// Function literals in package-level initialisers have bodies too.
			ast.Inspect(decl, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok && lit.Body != nil {
					fx.bodies = append(fx.bodies, [2]token.Pos{lit.Body.Lbrace, lit.Body.Rbrace})
					return false
				}
				return true
			})
		}
	}
	structSpecs := map[*ast.StructType]*ast.TypeSpec{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case nil, *ast.CommentGroup, *ast.Comment:
			return false
		case *ast.DeclStmt:
			if gd, ok := n.Decl.(*ast.GenDecl); ok {
				c.claimGenDecl(f, gd, false)
			}
		case *ast.TypeSpec:
			if st, ok := n.Type.(*ast.StructType); ok {
				structSpecs[st] = n
			}
		case *ast.StructType:
			c.claimFields(f, n, structSpecs[n])
		case *ast.InterfaceType:
			c.claimInterfaceMethods(f, n)
		}
		fx.noteCode(n)
		return true
	})
	return fx
}

// claim records that g documents s. The parser attaches a group to one
// node only; the first claim wins should that ever change.
func (c *collector) claim(g *ast.CommentGroup, s *site) {
	if g == nil {
		return
	}
	if _, dup := c.claims[g]; !dup {
		c.claims[g] = s
	}
}

func (c *collector) claimFunc(f *ast.File, fd *ast.FuncDecl) {
	if fd.Doc == nil || fd.Name == nil {
		return
	}
	t := target{name: "func " + fd.Name.Name}
	if fn, ok := c.info.Defs[fd.Name].(*types.Func); ok {
		t.obj, t.fn, t.name = fn, fn, "func "+c.funcName(fn)
	}
	c.claim(fd.Doc, &site{kind: siteFunc, file: f, decl: fd, what: t.name, targets: []target{t}})
}

func (c *collector) claimGenDecl(f *ast.File, gd *ast.GenDecl, topLevel bool) {
	var kind siteKind
	var what string
	switch gd.Tok {
	case token.IMPORT:
		kind, what = siteImport, "an import declaration"
	case token.CONST:
		kind, what = siteConst, "a const declaration"
	case token.TYPE:
		kind, what = siteType, "a type declaration"
	case token.VAR:
		kind, what = sitePackageVar, "a package-level var"
		if !topLevel {
			kind, what = siteLocalVar, "a local var declaration"
		}
	default:
		return
	}
	var all []target
	for _, spec := range gd.Specs {
		ts := c.specTargets(spec, kind)
		all = append(all, ts...)
		var doc, comment *ast.CommentGroup
		switch spec := spec.(type) {
		case *ast.ImportSpec:
			doc, comment = spec.Doc, spec.Comment
		case *ast.ValueSpec:
			doc, comment = spec.Doc, spec.Comment
		case *ast.TypeSpec:
			doc, comment = spec.Doc, spec.Comment
		}
		specWhat := what
		if len(ts) > 0 {
			specWhat = ts[0].name
		}
		specSite := &site{kind: kind, file: f, decl: spec, what: specWhat, targets: ts}
		c.claim(doc, specSite)
		trailing := &site{kind: siteTrailingSpec, file: f, decl: spec,
			what: "a comment trailing " + specWhat + " (only struct fields take trailing directives)"}
		if kind == sitePackageVar {
			trailing.asVar = specSite
		}
		c.claim(comment, trailing)
	}
	if len(all) > 0 && (kind == siteType || kind == sitePackageVar) {
		what = all[0].name
	}
	c.claim(gd.Doc, &site{kind: kind, file: f, decl: gd, what: what, targets: all})
}

// specTargets returns the objects a spec declares that directives can
// attach to: package vars and types.
func (c *collector) specTargets(spec ast.Spec, kind siteKind) []target {
	var ts []target
	switch spec := spec.(type) {
	case *ast.ValueSpec:
		if kind != sitePackageVar {
			return nil
		}
		for _, name := range spec.Names {
			if name == nil {
				continue
			}
			t := target{name: "var " + name.Name}
			if v, ok := c.info.Defs[name].(*types.Var); ok {
				t.obj = v
			}
			ts = append(ts, t)
		}
	case *ast.TypeSpec:
		if spec.Name == nil {
			return nil
		}
		t := target{name: "type " + spec.Name.Name, structName: "struct " + spec.Name.Name}
		// Without type information, judge by the syntax.
		_, structSyntax := spec.Type.(*ast.StructType)
		t.nonStruct = !structSyntax || spec.Assign.IsValid()
		if tn, ok := c.info.Defs[spec.Name].(*types.TypeName); ok {
			t.obj = tn
			if _, isStruct := tn.Type().Underlying().(*types.Struct); isStruct && !tn.IsAlias() {
				t.nonStruct = false
				t.structType = tn.Type()
			} else {
				t.nonStruct = true
			}
		}
		ts = append(ts, t)
	}
	return ts
}

// claimFields claims the doc and trailing comments of a struct's fields.
// spec is the type declaration whose type st is, if any.
func (c *collector) claimFields(f *ast.File, st *ast.StructType, spec *ast.TypeSpec) {
	if st.Fields == nil {
		return
	}
	structType := c.info.TypeOf(st)
	structName, typeName := "struct", ""
	var enclosing *types.TypeName
	if spec != nil && spec.Name != nil {
		typeName = spec.Name.Name
		structName = "struct " + typeName
		enclosing, _ = c.info.Defs[spec.Name].(*types.TypeName)
		if structType == nil && enclosing != nil {
			structType = enclosing.Type()
		}
	}
	for _, field := range st.Fields.List {
		if field == nil {
			continue
		}
		idents := field.Names
		if len(idents) == 0 {
			if id := NameIdent(field.Type); id != nil {
				idents = []*ast.Ident{id}
			}
		}
		var ts []target
		for _, id := range idents {
			if id == nil {
				continue
			}
			name := "field " + id.Name
			if typeName != "" {
				name = "field " + typeName + "." + id.Name
			}
			t := target{name: name, structType: structType, structName: structName, enclosing: enclosing}
			if v, ok := c.info.Defs[id].(*types.Var); ok && v.IsField() {
				t.obj = v
			}
			ts = append(ts, t)
		}
		what := "a struct field"
		if len(ts) > 0 {
			what = ts[0].name
		}
		s := &site{kind: siteField, file: f, decl: field, what: what, targets: ts}
		c.claim(field.Doc, s)
		c.claim(field.Comment, s)
	}
}

// NameIdent returns the identifier that names what expr denotes, without
// pointer, parentheses, package qualifier or type arguments: the name
// go/types records an embedded field's object under, and the callee's name
// in a call (f, x.f, pkg.F[T]). It returns nil for anything else.
func NameIdent(expr ast.Expr) *ast.Ident {
	for {
		switch e := expr.(type) {
		case *ast.Ident:
			return e
		case *ast.StarExpr:
			expr = e.X
		case *ast.ParenExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.SelectorExpr:
			return e.Sel
		default:
			return nil
		}
	}
}

func (c *collector) claimInterfaceMethods(f *ast.File, it *ast.InterfaceType) {
	if it.Methods == nil {
		return
	}
	for _, m := range it.Methods.List {
		if m == nil {
			continue
		}
		s := &site{kind: siteInterfaceMethod, file: f, decl: m, what: "an interface method"}
		c.claim(m.Doc, s)
		c.claim(m.Comment, s)
	}
}

// funcName names fn for messages: "Run", "(*Conn).Close".
func (c *collector) funcName(fn *types.Func) string {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return fn.Name()
	}
	return "(" + types.TypeString(sig.Recv().Type(), types.RelativeTo(c.pkg)) + ")." + fn.Name()
}
