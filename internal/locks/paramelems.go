package locks

import (
	"golang.org/x/tools/go/ssa"
)

// A helper that runs the callbacks it is given in a slice (`func
// runCallbacks(key string, cbs ...Callback) { for _, cb := range cbs {
// cb(key) } }`) calls elements of its parameter: its callers know what
// they put in the slice (a literal, `matches...` built by append from the
// registered callbacks). The call is a param call of the slice with Elems
// set; a caller resolves the functions its slice argument holds.

// elemOfParam returns the path of the parameter (or free variable) whose
// element v is (`cbs[i]`, a range over cbs), "" otherwise.
func (w *walker) elemOfParam(v ssa.Value) string {
	ld, ok := v.(*ssa.UnOp)
	if !ok {
		return ""
	}
	ia, ok := ld.X.(*ssa.IndexAddr)
	if !ok {
		return ""
	}
	return w.calledParam(w.fn, ia.X)
}

// sliceElems returns the values a slice may hold, as far as the function
// that built it shows: the elements of a literal (or of a variadic
// call's implicit one) and those appended, through phis; nil when it
// shows none.
func sliceElems(v ssa.Value) []ssa.Value {
	var out []ssa.Value
	seen := map[ssa.Value]bool{}
	var walk func(v ssa.Value, depth int)
	walk = func(v ssa.Value, depth int) {
		if v == nil || seen[v] || depth > 6 {
			return
		}
		seen[v] = true
		switch x := v.(type) {
		case *ssa.Phi:
			for _, e := range x.Edges {
				walk(e, depth+1)
			}
		case *ssa.Slice:
			out = append(out, literalElems(x)...)
		case *ssa.Call:
			if b, ok := x.Call.Value.(*ssa.Builtin); ok && b.Name() == "append" && len(x.Call.Args) == 2 {
				walk(x.Call.Args[0], depth+1)
				walk(x.Call.Args[1], depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}

// literalElems returns the values stored into the array a slice
// expression slices, when the array is a literal made here.
func literalElems(sl *ssa.Slice) []ssa.Value {
	arr, ok := sl.X.(*ssa.Alloc)
	if !ok {
		return nil
	}
	var out []ssa.Value
	for _, r := range *arr.Referrers() {
		if ia, ok := r.(*ssa.IndexAddr); ok {
			out = append(out, storedAt(ia)...)
		}
	}
	return out
}

// storedAt returns the values stored at the address addr.
func storedAt(addr ssa.Value) []ssa.Value {
	var out []ssa.Value
	for _, u := range *addr.Referrers() {
		if st, ok := u.(*ssa.Store); ok && st.Addr == addr {
			out = append(out, st.Val)
		}
	}
	return out
}
