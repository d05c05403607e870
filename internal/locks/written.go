package locks

import (
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
	m, exact := e.implicitMethod(mi.X.Type(), "Write", 1, 2)
	if fn.String() == "io.WriteString" {
		if ws, wsExact := e.implicitMethod(mi.X.Type(), "WriteString", 1, 2); ws != nil {
			m, exact = ws, wsExact
		}
	}
	if m != nil {
		out = append(out, target{fn: m, vals: []ssa.Value{mi.X}, exact: exact})
	}
	return out
}
