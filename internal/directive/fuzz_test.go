package directive

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The seed corpus lives in testdata/fuzz/FuzzParse and
// testdata/fuzz/FuzzCollect, one file per case.

var analyzers = []string{Confined, LockOrder, RevokePath}

var categories = []string{
	CategoryUnknown, CategoryMalformed, CategoryArgs, CategoryIgnoreReason, CategoryPlacement,
	CategoryConflict, CategoryLock, CategoryParam, CategoryRole,
}

func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		const pos token.Pos = 1 << 20
		end := pos + token.Pos(len(text))
		d, ok, p := Parse(text, pos)
		d2, ok2, p2 := Parse(text, pos)
		if !reflect.DeepEqual(d, d2) || ok != ok2 || !reflect.DeepEqual(p, p2) {
			t.Fatalf("Parse(%q) is not deterministic", text)
		}
		if p != nil {
			checkProblem(t, *p, pos, end)
			return
		}
		if !ok {
			return
		}
		if !d.Verb.Known() || d.Spelling == "" || d.Pos != pos || d.End != end {
			t.Fatalf("Parse(%q) = %+v: bad verb, spelling or span", text, d)
		}
		spec, _ := specOf(d.Verb)
		for _, a := range d.Args {
			if a.Pos < pos || a.Pos > end {
				t.Fatalf("Parse(%q): arg %q at %d outside [%d,%d]", text, a.Text, a.Pos, pos, end)
			}
			if rest := text[a.Pos-pos:]; !strings.HasPrefix(rest, a.Text) && !strings.HasPrefix(rest, `"`) && !strings.HasPrefix(rest, "`") {
				t.Fatalf("Parse(%q): arg %q does not start at its position", text, a.Text)
			}
		}
		switch spec.args {
		case argsOptionalRole:
			if !isIdentifier(d.Role) {
				t.Fatalf("Parse(%q): role %q", text, d.Role)
			}
		case argsLockPath, argsAliasPair:
			for _, a := range d.Args {
				if !isLockPath(a.Text) {
					t.Fatalf("Parse(%q): lock path %q", text, a.Text)
				}
			}
		case argsReason:
			if d.Reason == "" && !strings.HasPrefix(d.Spelling, "+") {
				t.Fatalf("Parse(%q): ignore without a reason", text)
			}
		}
	})
}

func checkProblem(t *testing.T, p Problem, pos, end token.Pos) {
	t.Helper()
	if p.Pos < pos || p.End < p.Pos || p.End > end {
		t.Fatalf("problem %+v outside the comment [%d,%d]", p, pos, end)
	}
	if !slices.Contains(analyzers, p.Analyzer) || !slices.Contains(categories, p.Category) || p.Message == "" {
		t.Fatalf("problem %+v: bad analyzer, category or message", p)
	}
}

// collectTemplate puts a directive in every position a comment can take;
// DIR is replaced by the fuzzed comment text.
const collectTemplate = `DIR
package p

DIR
import "sync"

DIR
const k = 1

DIR
type T struct {
	DIR
	mu sync.Mutex
	rw sync.RWMutex
	DIR
	n int DIR
	Inner
	s struct {
		DIR
		x int
	}
}

type Inner struct{ mu *sync.Mutex }

DIR
type N int

DIR
var v, w int

DIR
func (t *T) M(p *T, fn func()) (r *T) {
	DIR
	t.n++ DIR
	go func() {
		DIR
		_ = p
	}()
	DIR
	var local int DIR
	_ = local
	DIR

	return nil
}

type I interface {
	DIR
	M()
}

DIR

func after() {}
DIR`

func FuzzCollect(f *testing.F) {
	f.Fuzz(func(t *testing.T, directive, src string) {
		// The directive as a line comment: drop what would end it.
		comment := "//" + strings.NewReplacer("\n", "", "\r", "").Replace(directive)
		collectFuzzed(t, strings.ReplaceAll(collectTemplate, "DIR", comment))
		collectFuzzed(t, src)
	})
}

// collectFuzzed parses src, type-checks it when it parses, runs Collect
// twice and checks the result's invariants.
func collectFuzzed(t *testing.T, src string) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if file == nil {
		return
	}
	var pkg *types.Package
	info := newInfo()
	if err == nil {
		conf := &types.Config{Importer: stubImporter(), Error: func(error) {}}
		pkg, _ = conf.Check("example.com/p", fset, []*ast.File{file}, info)
	}
	set := Collect(fset, []*ast.File{file}, pkg, info, func(r string) bool { return r == "imported" })
	again := Collect(fset, []*ast.File{file}, pkg, info, func(r string) bool { return r == "imported" })
	if !reflect.DeepEqual(set.Problems, again.Problems) || !reflect.DeepEqual(set.Ignores, again.Ignores) ||
		!reflect.DeepEqual(set.Forces, again.Forces) || !reflect.DeepEqual(set.Roles, again.Roles) {
		t.Fatalf("Collect is not deterministic on\n%s", src)
	}
	tf := fset.File(file.FileStart)
	lo, hi := token.Pos(tf.Base()), token.Pos(tf.Base()+tf.Size())
	for _, p := range set.Problems {
		checkProblem(t, p, lo, hi)
	}
	for obj, ds := range set.Objects {
		if obj == nil || len(ds) == 0 {
			t.Fatalf("empty entry for %v", obj)
		}
		for _, d := range ds {
			spec, _ := specOf(d.Verb)
			if (spec.args == argsLockPath || spec.args == argsAliasPair) && d.Lock == nil ||
				spec.args == argsAliasPair && d.AliasOf == nil {
				t.Fatalf("%v: %s without a resolved lock", obj, d.Spelling)
			}
		}
	}
	for _, ig := range set.Ignores {
		if ig.Line <= 0 {
			t.Fatalf("ignore at %v without a line", fset.Position(ig.Pos))
		}
	}
	for _, d := range set.Forces {
		if d.Line <= 0 {
			t.Fatalf("force at %v without a line", fset.Position(d.Pos))
		}
	}
}
