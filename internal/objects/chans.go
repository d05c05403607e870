package objects

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Channels kept in containers: a broker's subscriber channels in a slice
// or map (`for _, ch := range f.subs { ch <- ev }`, go-ethereum's
// event.Feed). Which channel an element is follows the chain the element
// was put in by, as for func values (funcs.go): the container to what is
// stored or appended into it, a parameter to its calls' arguments. What
// starts the chain (a field, a package var, a make) names the channel.

// ElemSources returns, for v, a value of fn read from an element of a
// map, slice, array or channel, the values at the start of the chains
// that put elements there, each with the function it belongs to; ok is
// false when v is no element read or a chain is lost (a container of
// another package, too many moves).
func (x *Index) ElemSources(fn *ssa.Function, v ssa.Value) (out []Placed, ok bool) {
	fn, v = x.Resolve(fn, v)
	if _, isElem := x.readFrom(v); !isElem {
		return nil, false
	}
	w := &elemWalk{x: x, seen: map[any]bool{}, ok: true}
	w.value(fn, v, 0)
	return w.out, w.ok && len(w.out) > 0
}

// Placed is a value of a function (stored somewhere by it, or at the
// start of a chain of moves).
type Placed struct {
	Fn  *ssa.Function
	Val ssa.Value
}

type elemWalk struct {
	x    *Index
	seen map[any]bool
	out  []Placed
	ok   bool
}

func (w *elemWalk) value(fn *ssa.Function, v ssa.Value, depth int) {
	if depth > maxFuncDepth {
		w.ok = false
		return
	}
	fn, v = w.x.Resolve(fn, v)
	switch u := v.(type) {
	case *ssa.Phi:
		if !w.seen[u] {
			w.seen[u] = true
			for _, e := range u.Edges {
				w.value(fn, e, depth+1)
			}
		}
		return
	case *ssa.Parameter:
		w.param(u, depth)
		return
	}
	if key, isElem := w.x.readFrom(v); key != nil && isElem {
		if w.seen[key] {
			return
		}
		w.seen[key] = true
		stored := w.x.funcRecord().into[key]
		if len(stored) == 0 {
			w.ok = false // filled elsewhere: another package's
		}
		for _, p := range stored {
			w.value(p.Fn, p.Val, depth+1)
		}
		return
	}
	w.out = append(w.out, Placed{fn, v})
}

// param follows a package function's parameter to its calls' arguments;
// a closure's parameter, or one of a function no package code calls, is
// lost.
func (w *elemWalk) param(p *ssa.Parameter, depth int) {
	fn := p.Parent()
	if fn == nil || fn.Parent() != nil {
		w.ok = false
		return
	}
	if w.seen[p] {
		return
	}
	w.seen[p] = true
	args := w.x.argsOf(p)
	if len(args) == 0 {
		w.ok = false
	}
	for _, a := range args {
		w.value(a.Fn, a.Val, depth+1)
	}
}

func isChan(t types.Type) bool {
	_, ok := t.Underlying().(*types.Chan)
	return ok
}

// NilConstant reports whether v is the nil constant, through
// conversions.
func NilConstant(v ssa.Value) bool {
	c, ok := Underlying(v).(*ssa.Const)
	return ok && c.IsNil()
}
