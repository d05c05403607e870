package ownership

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"

	"github.com/confinelint/confinelint/internal/objects"
)

const src = `package p

type C struct{ n int; m map[int]int; s []int }

func ctor(ch chan *C) *C {
	c := &C{}
	c.n = 1
	ch <- c
	c.n = 2
	return c
}

func recv(ch chan *C) {
	for c := range ch {
		c.n++
	}
}

func kinds(c *C) int {
	c.m[1] = 2
	c.s[0] = 1
	return c.n
}
`

func build(t *testing.T) *ssa.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, _, err := ssautil.BuildPackage(&types.Config{Importer: importer.Default()}, fset, types.NewPackage("p", ""), []*ast.File{f}, ssa.SanityCheckFunctions)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// fieldAddrs returns fn's field addresses in instruction order.
func fieldAddrs(fn *ssa.Function) []*ssa.FieldAddr {
	var out []*ssa.FieldAddr
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if fa, ok := instr.(*ssa.FieldAddr); ok {
				out = append(out, fa)
			}
		}
	}
	return out
}

func TestConstructionBeforePublication(t *testing.T) {
	fn := build(t).Func("ctor")
	e := &engine{}
	fas := fieldAddrs(fn)
	if len(fas) != 2 {
		t.Fatalf("want 2 field addresses, got %d", len(fas))
	}
	if !e.exempt(fn, fas[0].X, fas[0]) {
		t.Error("c.n = 1 before the send is not construction")
	}
	if e.exempt(fn, fas[1].X, fas[1]) {
		t.Error("c.n = 2 after the send is construction")
	}
}

func TestReceivedIsOwned(t *testing.T) {
	fn := build(t).Func("recv")
	e := &engine{}
	for _, fa := range fieldAddrs(fn) {
		if !e.exempt(fn, fa.X, fa) {
			t.Errorf("%v: a value received from a channel is not the receiver's", fa)
		}
	}
}

func TestAccessKinds(t *testing.T) {
	fn := build(t).Func("kinds")
	want := map[string]kind{"m": write, "s": write, "n": read}
	for _, fa := range fieldAddrs(fn) {
		name := objects.StructOf(fa.X.Type()).Field(fa.Field).Name()
		if got := addrKind(fa, 0); got != want[name] {
			t.Errorf("c.%s: kind %v, want %v", name, got, want[name])
		}
	}
}
