package locks

import (
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// A take made only where a parameter is nil is the argument's to decide,
// not a choice of the callers to call: `if tx == nil { tx =
// db.Begin(); defer ... }` opens a transaction unless the caller gives
// one (lnd's markEdgeLiveUnsafe inside FilterKnownChanIDs' transaction,
// OPA's PrepareForEval given the decision's transaction). The take
// carries the value (take.nilPath) up through callers that pass their
// own parameter, or a field of one, on; a caller that passes a value
// known not nil never takes it that way; one that passes anything else
// (a map lookup: go-ethereum's clientPool handing a disconnected client
// as nil) chooses, as for any branch (relockSomePaths). Where no call of
// the function can give the value nil, the take is dropped
// (nilFromNoCaller).

// nilSideParam returns the parameter ("p1") whose being nil is the one
// condition under which the block being walked runs, "" if none.
func (w *walker) nilSideParam() string {
	if w.blk == nil {
		return ""
	}
	c := w.onlyWhen(w.blk)
	if c == nil || c.val != nilConst || c.neg {
		return ""
	}
	path, _, _ := strings.Cut(c.key, "#")
	root, rest := rootOf(path)
	if rest != "" || paramIndex(root, "p") < 0 {
		return ""
	}
	return root
}

// passedNil maps a take's nil condition on the callee's value path (a
// parameter, or a field of one) to the walked function, whose values
// for the callee's parameters are vals: its own parameter, or a field of
// one, passed there; never, when the value is known not nil here; "" when
// the value is this function's to choose.
func (w *walker) passedNil(vals []ssa.Value, path string, s State) (string, bool) {
	root, rest := rootOf(path)
	i := paramIndex(root, "p")
	if i < 0 || i >= len(vals) || vals[i] == nil {
		return "", false
	}
	v := vals[i]
	if rest != "" {
		if k := paramIndexOf(w.fn, v); k >= 0 {
			return "p" + strconv.Itoa(k) + rest, false
		}
		if v = storedField(v, strings.TrimPrefix(rest, ".")); v == nil {
			return "", false
		}
	}
	if k := paramIndexOf(w.fn, v); k >= 0 {
		return "p" + strconv.Itoa(k), false
	}
	if p, name := paramField(w.fn, v); p >= 0 {
		return "p" + strconv.Itoa(p) + "." + name, false
	}
	return "", w.knownNotNil(v, s) || freshResult(v)
}

// nilArgKnown reports whether tk, which ft takes only where its parameter
// is nil, is given a value there the param call pc knows is not nil: a
// transaction's function handed the transaction (`f(&RwTx{db})`) never
// opens another.
func nilArgKnown(ft *target, tk take, pc paramCall) bool {
	root, rest := rootOf(tk.nilPath)
	k := paramIndex(root, "p")
	if k < 0 || rest != "" {
		return false
	}
	i := k - (len(ft.fn.Params) - pc.args)
	return i >= 0 && i < pc.args && i < maxNonNilArgs && pc.nonNil&(1<<i) != 0
}

// paramField returns the parameter and the field name when v loads a
// field of one of fn's parameters (decision.Txn); -1 otherwise.
func paramField(fn *ssa.Function, v ssa.Value) (int, string) {
	u, ok := v.(*ssa.UnOp)
	if !ok {
		return -1, ""
	}
	fa, ok := u.X.(*ssa.FieldAddr)
	if !ok {
		return -1, ""
	}
	k := paramIndexOf(fn, fa.X)
	if k < 0 {
		return -1, ""
	}
	return k, objects.FieldName(fa.X.Type(), fa.Field)
}

// storedField returns the one value stored into field name of v, a
// struct allocated in the function (&Info{Txn: txn}); nil otherwise.
func storedField(v ssa.Value, name string) ssa.Value {
	a, ok := objects.Underlying(v).(*ssa.Alloc)
	if !ok {
		return nil
	}
	return objects.StoredInField(a, func(fa *ssa.FieldAddr) bool { return objects.FieldName(fa.X.Type(), fa.Field) == name })
}

// freshResult reports whether v is the result of a package function that
// returns a new allocation on every path (NewTransaction returning
// &Transaction{...}): not nil.
func freshResult(v ssa.Value) bool {
	c, ok := v.(*ssa.Call)
	if !ok {
		return false
	}
	f := c.Call.StaticCallee()
	if f == nil || f.Signature.Results().Len() != 1 {
		return false
	}
	rets := objects.ReturnedValues(f)
	for _, r := range rets {
		if _, ok := objects.Underlying(r).(*ssa.Alloc); !ok {
			return false
		}
	}
	return len(rets) > 0
}

// nilSideUnreached reports whether the block being walked runs only where
// a parameter is nil that no call gives nil. The calls are checked known
// first: most functions' are not, and nilSideParam walks the function.
func (w *walker) nilSideUnreached() bool {
	if _, ok := w.e.objs.StaticCalls(w.fn); !ok {
		return false
	}
	return w.e.nilFromNoCaller(w.fn, w.nilSideParam(), 0)
}

// maxNilCallers bounds the callers nilFromNoCaller follows up.
const maxNilCallers = 3

// nilFromNoCaller reports whether no call of fn can give the value at
// path (a parameter, or a field of one) as nil: every call is known
// (objects.StaticCalls) and passes a value surely not nil, or passes its
// own function's parameter on, of which the same holds. A take on that
// nil side never runs: OPA's maskEvent, whose one caller Log is given
// the decision with the transaction Check opened.
func (e *engine) nilFromNoCaller(fn *ssa.Function, path string, depth int) bool {
	if path == "" || depth > maxNilCallers {
		return false
	}
	calls, ok := e.objs.StaticCalls(fn)
	if !ok || len(calls) == 0 {
		return false
	}
	root, rest := rootOf(path)
	i := paramIndex(root, "p")
	for _, c := range calls {
		if i < 0 || i >= len(c.Args) {
			return false
		}
		v, caller := c.Args[i], c.Args[i].Parent()
		if caller == nil {
			return false // a constant, a package var
		}
		if rest != "" {
			if v = storedField(v, strings.TrimPrefix(rest, ".")); v == nil {
				return false
			}
		}
		switch {
		case surelyNotNil(v):
		case paramIndexOf(caller, v) >= 0:
			if !e.nilFromNoCaller(caller, "p"+strconv.Itoa(paramIndexOf(caller, v)), depth+1) {
				return false
			}
		default:
			p, name := paramField(caller, v)
			if p < 0 || !e.nilFromNoCaller(caller, "p"+strconv.Itoa(p)+"."+name, depth+1) {
				return false
			}
		}
	}
	return true
}

// surelyNotNil reports whether v is not nil whatever the walk knows: made
// here, or a package function's fresh allocation.
func surelyNotNil(v ssa.Value) bool {
	switch v.(type) {
	case *ssa.MakeInterface, *ssa.Alloc, *ssa.MakeClosure, *ssa.MakeMap, *ssa.MakeChan:
		return true
	}
	return freshResult(v)
}
