package locks

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// fmt.Fprint and its kin, and io.WriteString, write what they format to
// the io.Writer they are given, in place: `t.Lock(); fmt.Fprint(t, text)`
// runs t's own Write, which locks t again (tview's SetText). The call
// runs the Write (or, for io.WriteString, WriteString) method of the
// writer's static type when it has one; a writer of interface type is
// resolved as any interface call is, not here.

// writesFirstArg lists the functions that write to their first
// argument, once, whatever they were given (io.Copy writes only what it
// reads: not listed).
var writesFirstArg = map[string]bool{
	"fmt.Fprint":     true,
	"fmt.Fprintf":    true,
	"fmt.Fprintln":   true,
	"io.WriteString": true,
}

// written appends to out the Write method fn, called with args, runs on
// the writer it is given.
func (e *engine) written(fn *ssa.Function, args []ssa.Value, out []target) []target {
	if !writesFirstArg[fn.String()] {
		return out
	}
	mi, ok := args[0].(*ssa.MakeInterface)
	if !ok {
		return out
	}
	name := "Write"
	if fn.String() == "io.WriteString" && e.writeMethod(mi.X.Type(), "WriteString") != nil {
		name = "WriteString"
	}
	if sel := e.writeMethod(mi.X.Type(), name); sel != nil {
		if m, exact := e.implicitCall(mi.X.Type(), sel, sel.Obj().(*types.Func)); m != nil {
			out = append(out, target{fn: m, vals: []ssa.Value{mi.X}, exact: exact})
		}
	}
	return out
}

// writeMethod returns the selection of t's method name, when t is a
// concrete type and the method writes (one parameter, results (int,
// error)).
func (e *engine) writeMethod(t types.Type, name string) *types.Selection {
	if types.IsInterface(t) {
		return nil
	}
	sel := e.p.SSA.Pkg.Prog.MethodSets.MethodSet(t).Lookup(nil, name)
	if sel == nil {
		return nil
	}
	obj, ok := sel.Obj().(*types.Func)
	if !ok || obj.Signature().Params().Len() != 1 || obj.Signature().Results().Len() != 2 {
		return nil
	}
	return sel
}
