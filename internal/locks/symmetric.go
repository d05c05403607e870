package locks

import (
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/objects"
)

// Two locks of one class, taken one under the other by a function that
// reaches both the same way from two of its parameters of one type
// (`lockFor(oldDir)`, then `lockFor(newDir)`; `locks[hash(to)]`, then
// `locks[hash(from)]` for each from; `a.mu`, then `b.mu`), are taken in
// the order the caller passes them: the same function called at once
// with the two swapped deadlocks (two renames between the same two
// directories, two merges into each other). Not when the function orders
// them first (a comparison between the two parameters' values), nor
// when it holds another lock exclusively across both (the calls are
// serialized), nor when the program runs it once (one call, outside any
// loop, of a function that runs once: objects.CalledOnce). Only locks the
// function takes itself: their objects are at hand. In test code, only a
// function a test runs beside itself.

// symSource is how a directly taken lock's object is reached from the
// function's parameters: a template with the parameters left out, and
// the parameters, in order (an element of a slice parameter counts as
// the parameter, with the element's type).
type symSource struct {
	template string
	params   []symParam
}

type symParam struct {
	name string // the parameter, "[]" appended for its elements
	typ  types.Type
}

// maxSymDepth bounds the steps followed back from a lock's object.
const maxSymDepth = 6

// symSourceOf describes v, a lock's object in fn, or returns nil.
func symSourceOf(fn *ssa.Function, v ssa.Value) *symSource {
	s := &symSource{}
	var b strings.Builder
	if !s.write(&b, fn, v, 0) || len(s.params) == 0 {
		return nil
	}
	s.template = b.String()
	return s
}

func (s *symSource) write(b *strings.Builder, fn *ssa.Function, v ssa.Value, depth int) bool {
	if depth > maxSymDepth {
		return false
	}
	switch u := v.(type) {
	case *ssa.Parameter:
		if u.Parent() != fn {
			return false
		}
		s.params = append(s.params, symParam{u.Name(), u.Type()})
		b.WriteString("$")
		return true
	case *ssa.Const:
		b.WriteString(u.String())
		return true
	case *ssa.Global:
		b.WriteString(u.Name())
		return true
	case *ssa.FieldAddr:
		ok := s.write(b, fn, u.X, depth+1)
		b.WriteString("." + objects.FieldName(u.X.Type(), u.Field))
		return ok
	case *ssa.Field:
		ok := s.write(b, fn, u.X, depth+1)
		b.WriteString("." + objects.FieldName(u.X.Type(), u.Field))
		return ok
	case *ssa.UnOp:
		if u.Op != token.MUL {
			return false
		}
		if ia, ok := u.X.(*ssa.IndexAddr); ok && s.paramElem(fn, ia.X, ia.Index) {
			b.WriteString("$") // for _, x := range param
			return true
		}
		b.WriteString("*")
		return s.write(b, fn, u.X, depth+1)
	case *ssa.ChangeType:
		return s.write(b, fn, u.X, depth+1)
	case *ssa.Convert:
		return s.write(b, fn, u.X, depth+1)
	case *ssa.IndexAddr:
		if s.paramElem(fn, u.X, u.Index) {
			b.WriteString("$")
			return true
		}
		return s.writeIndex(b, fn, u.X, u.Index, depth)
	case *ssa.Index:
		return s.writeIndex(b, fn, u.X, u.Index, depth)
	case *ssa.Lookup:
		return s.writeIndex(b, fn, u.X, u.Index, depth)
	case *ssa.BinOp:
		b.WriteString("(")
		ok := s.write(b, fn, u.X, depth+1)
		b.WriteString(u.Op.String())
		ok = ok && s.write(b, fn, u.Y, depth+1)
		b.WriteString(")")
		return ok
	case *ssa.Extract:
		if next, ok := u.Tuple.(*ssa.Next); ok && u.Index == 2 {
			if rg, ok := next.Iter.(*ssa.Range); ok {
				if p, ok := rg.X.(*ssa.Parameter); ok && p.Parent() == fn { // for _, x := range param
					s.params = append(s.params, symParam{p.Name() + "[]", u.Type()})
					b.WriteString("$")
					return true
				}
			}
		}
		if u.Index == 0 {
			if c, ok := u.Tuple.(*ssa.Call); ok {
				return s.writeCall(b, fn, c, depth)
			}
		}
		return false
	case *ssa.Call:
		return s.writeCall(b, fn, u, depth)
	}
	return false
}

// paramElem records x[index], a variable element of a slice parameter,
// as that parameter's element ("keys[]"): for _, k := range keys.
func (s *symSource) paramElem(fn *ssa.Function, x, index ssa.Value) bool {
	p, ok := x.(*ssa.Parameter)
	if !ok || p.Parent() != fn {
		return false
	}
	sl, ok := p.Type().Underlying().(*types.Slice)
	if _, isConst := index.(*ssa.Const); !ok || isConst {
		return false
	}
	s.params = append(s.params, symParam{p.Name() + "[]", sl.Elem()})
	return true
}

func (s *symSource) writeIndex(b *strings.Builder, fn *ssa.Function, x, index ssa.Value, depth int) bool {
	ok := s.write(b, fn, x, depth+1)
	b.WriteString("[")
	ok = ok && s.write(b, fn, index, depth+1)
	b.WriteString("]")
	return ok
}

func (s *symSource) writeCall(b *strings.Builder, fn *ssa.Function, c *ssa.Call, depth int) bool {
	callee := c.Call.StaticCallee()
	if callee == nil {
		return false
	}
	b.WriteString(callee.String() + "(")
	for i, a := range c.Call.Args {
		if i > 0 {
			b.WriteString(",")
		}
		if !s.write(b, fn, a, depth+1) {
			return false
		}
	}
	b.WriteString(")")
	return true
}

// swapped returns the two parameters whose exchange turns a's source into
// b's: one position differs, of one type; ok false otherwise.
func swapped(a, b *symSource) (from, to symParam, ok bool) {
	if a == nil || b == nil || a.template != b.template || len(a.params) != len(b.params) {
		return symParam{}, symParam{}, false
	}
	diff := -1
	for i := range a.params {
		if a.params[i].name == b.params[i].name {
			continue
		}
		if diff >= 0 || !types.Identical(a.params[i].typ, b.params[i].typ) {
			return symParam{}, symParam{}, false
		}
		diff = i
	}
	if diff < 0 {
		return symParam{}, symParam{}, false
	}
	return a.params[diff], b.params[diff], true
}

// noteSymmetric reports h, taken under o of its class, when the two are
// reached the same way from two parameters the function does not order.
func (w *walker) noteSymmetric(o, h Hold, holds []Hold, pos token.Pos) {
	if !w.report || o.Maybe || o.sym == nil || h.sym == nil || o.Path == h.Path || w.private(h) || w.private(o) {
		return
	}
	first, second, ok := swapped(o.sym, h.sym)
	if !ok || w.ordersParams(first.name, second.name) || w.e.objs.CalledOnce(w.fn) {
		return // a function the program runs once is never beside itself
	}
	for _, x := range holds {
		if x.Class != o.Class && x.Class != "" && !x.Maybe && !x.Shared {
			return // serialized by a lock held across both
		}
	}
	if o.Shared && h.Shared {
		return
	}
	fname := w.e.funcName(w.fn)
	msg := "lock order by argument: " + fname + " holds the " + o.Name + " of " + argName(first.name) + " (" + w.e.at(o.Pos) + ") and takes the " +
		h.Name + " of " + argName(second.name) + ": two calls at once with the arguments swapped deadlock"
	rule := "lock-order"
	if w.e.inTest(pos) {
		// In test code, only when a test runs the function beside itself
		// (a helper comparing two values under both locks, called once
		// from a test, deadlocks with no one).
		if !slices.ContainsFunc(w.e.besideInTests(fname), func(s map[string]bool) bool { return s[fname] }) {
			return
		}
		rule = "lock-order-test"
	}
	w.e.find(pos, rule, msg, diag.Hop{Pos: o.Pos, What: fname + " holds the " + o.Name + " of " + argName(first.name)}, diag.Hop{Pos: pos, What: fname + " takes the " + h.Name + " of " + argName(second.name)})
}

// argName renders a parameter, or an element of one ("keys[]").
func argName(p string) string {
	if name, ok := strings.CutSuffix(p, "[]"); ok {
		return "an element of " + name
	}
	return p
}

// ordersParams reports whether the walked function compares values of
// the two parameters with an ordering operator (sorting them first).
func (w *walker) ordersParams(a, b string) bool {
	a, b = strings.TrimSuffix(a, "[]"), strings.TrimSuffix(b, "[]")
	for _, blk := range w.fn.Blocks {
		for _, instr := range blk.Instrs {
			op, ok := instr.(*ssa.BinOp)
			if !ok || op.Op != token.LSS && op.Op != token.GTR && op.Op != token.LEQ && op.Op != token.GEQ {
				continue
			}
			x, y := paramsIn(op.X), paramsIn(op.Y)
			if x[a] && y[b] || x[b] && y[a] {
				return true
			}
		}
	}
	return false
}

// paramsIn names the parameters v is computed from, a few steps back.
func paramsIn(v ssa.Value) map[string]bool {
	out := map[string]bool{}
	var walk func(v ssa.Value, depth int)
	walk = func(v ssa.Value, depth int) {
		if depth > maxSymDepth || v == nil {
			return
		}
		switch u := v.(type) {
		case *ssa.Parameter:
			out[u.Name()] = true
		case *ssa.Phi:
			for _, e := range u.Edges {
				walk(e, depth+1)
			}
		case ssa.Instruction:
			for _, op := range u.Operands(nil) {
				if *op != nil {
					walk(*op, depth+1)
				}
			}
		}
	}
	walk(v, 0)
	return out
}
