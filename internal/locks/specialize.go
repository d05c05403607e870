package locks

import (
	"go/constant"
	"go/token"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// Calls with constant arguments for parameters the callee branches on
// (`c.allowed(s, true)` reaching `if !locked { c.mu.Lock() }`) use a
// summary of the callee walked with those parameters known (cond.go): the
// branch the constant rules out is dead, and what the live path takes is
// taken for sure.

// summaryFor returns the summary of t's callee for this call: specialized
// by constant arguments when the callee tests them.
func (w *walker) summaryFor(t *target) *funcInfo {
	if t.sum != nil {
		return t.sum
	}
	sum := w.e.summaryOf(t.fn)
	if sum == nil || !t.exact || !w.e.p.FuncSet[t.fn] {
		return sum
	}
	var known []fact
	for _, i := range w.e.testedParams(t.fn) {
		if i >= len(t.vals) {
			continue
		}
		if i >= len(t.fn.Params) {
			continue
		}
		if c, ok := objects.Underlying(t.vals[i]).(*ssa.Const); ok && c.Value != nil && c.Value.Kind() != constant.Unknown {
			// The key condKey gives the parameter inside the callee.
			key := "p" + strconv.Itoa(i) + "#" + t.fn.Params[i].Type().String()
			known = append(known, fact{key: key, val: c.Value})
		}
	}
	if len(known) == 0 {
		return sum
	}
	return w.e.specialized(t.fn, known, sum)
}

// specialized walks fn with known parameter values, once per set of
// values; generic is the answer inside a recursion.
func (e *engine) specialized(fn *ssa.Function, known []fact, generic *funcInfo) *funcInfo {
	slices.SortFunc(known, factLess)
	var key strings.Builder
	for _, f := range known {
		key.WriteString(f.key + "=" + f.val.ExactString() + ";")
	}
	k := specKey{fn, key.String()}
	if info, ok := e.specials[k]; ok {
		return info
	}
	if e.specializing[fn] {
		return generic
	}
	e.specializing[fn] = true
	defer delete(e.specializing, fn)
	entry := e.declaredEntry(fn)
	entry.facts = known
	info := &funcInfo{}
	cur := e.cur
	e.walk(fn, info, entry, false)
	e.cur = cur
	e.specials[k] = info
	return info
}

type specKey struct {
	fn    *ssa.Function
	known string
}

// testedParams lists the parameters fn branches on directly: `if p`,
// `if !p`, `if p == K`, `if p != K`.
func (e *engine) testedParams(fn *ssa.Function) []int {
	if ps, ok := e.tested[fn]; ok {
		return ps
	}
	var out []int
	add := func(v ssa.Value) {
		p, ok := v.(*ssa.Parameter)
		if !ok {
			return
		}
		for i, q := range fn.Params {
			if q == p {
				for _, j := range out {
					if j == i {
						return
					}
				}
				out = append(out, i)
			}
		}
	}
	for _, b := range fn.Blocks {
		ifi, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If)
		if !ok {
			continue
		}
		cond := ifi.Cond
		for {
			u, ok := cond.(*ssa.UnOp)
			if !ok || u.Op != token.NOT {
				break
			}
			cond = u.X
		}
		if bin, ok := cond.(*ssa.BinOp); ok && (bin.Op == token.EQL || bin.Op == token.NEQ) {
			add(bin.X)
			add(bin.Y)
			continue
		}
		add(cond)
	}
	e.tested[fn] = out
	return out
}
