package vetmem

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
)

// keepDeclTypes cuts the type checker's records down to what is read once
// SSA is built. The SSA builder is their main reader and lets go of them
// when done (ssa.Package.Build); after it confinelint reads Defs, Implicits
// and the types of type expressions of declarations (struct types, fields,
// signatures, package-level var specs), plus the values of package-level
// `var _ I = v` assertions (locks.scanAssertions). Types, Uses and
// Selections were a fifth of the live heap on the corpus's largest package,
// kept through the summary's work only because unitchecker keeps the pass
// (bench/RESULTS.md). The type expressions inside function bodies
// (conversions, literals, make) are most of the Types that are types, and
// only their struct types are read (directives on a local struct's fields).
//
// A new map replaces each one: deleting from a Go map frees nothing.
func keepDeclTypes(files []*ast.File, info *types.Info) {
	bodies := funcBodies(files)
	kept := make(map[ast.Expr]types.TypeAndValue)
	for e, tv := range info.Types {
		if _, isStruct := e.(*ast.StructType); tv.IsType() && (isStruct || !bodies.contain(e.Pos())) {
			kept[e] = tv
		}
	}
	for _, v := range packageVarValues(files) {
		if tv, ok := info.Types[v]; ok {
			kept[v] = tv
		}
	}
	info.Types = kept
	info.Uses = nil
	info.Selections = nil
}

// spans are sorted, disjoint position ranges.
type spans [][2]token.Pos

func (s spans) contain(pos token.Pos) bool {
	_, found := slices.BinarySearchFunc(s, pos, func(sp [2]token.Pos, p token.Pos) int {
		switch {
		case sp[1] < p:
			return -1
		case sp[0] > p:
			return 1
		}
		return 0
	})
	return found
}

// funcBodies lists the bodies of the files' declared functions.
func funcBodies(files []*ast.File) spans {
	var out spans
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				out = append(out, [2]token.Pos{fd.Body.Lbrace, fd.Body.Rbrace})
			}
		}
	}
	slices.SortFunc(out, func(a, b [2]token.Pos) int { return int(a[0] - b[0]) })
	return out
}

// packageVarValues lists the initial values of the files' package-level
// variables.
func packageVarValues(files []*ast.File) []ast.Expr {
	var out []ast.Expr
	for _, f := range files {
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, spec := range gd.Specs {
					out = append(out, spec.(*ast.ValueSpec).Values...)
				}
			}
		}
	}
	return out
}
