package locks

import (
	"golang.org/x/tools/go/ssa"
)

// encoding/json calls the MarshalJSON method of the value it is given,
// as fmt calls String: `s.mu.Lock(); json.Marshal(s)` with a MarshalJSON
// that read-locks s.mu locks it again, and a MarshalJSON that marshals
// its own receiver under its lock re-enters itself. Only the value
// passed, of a static type with the method: what the encoder finds
// inside it by reflection is not followed.

// marshalArg gives, per function, the index of the argument it marshals
// (a method's receiver counted).
var marshalArg = map[string]int{
	"encoding/json.Marshal":           0,
	"encoding/json.MarshalIndent":     0,
	"(*encoding/json.Encoder).Encode": 1,
}

// marshalled appends to out the MarshalJSON method fn, called with args,
// runs on the value it marshals.
func (e *engine) marshalled(fn *ssa.Function, args []ssa.Value, out []target) []target {
	i, ok := marshalArg[fn.String()]
	if !ok || i >= len(args) {
		return out
	}
	mi, ok := args[i].(*ssa.MakeInterface)
	if !ok {
		return out
	}
	if m, exact := e.implicitMethod(mi.X.Type(), "MarshalJSON", 0, 2); m != nil {
		out = append(out, target{fn: m, vals: []ssa.Value{mi.X}, exact: exact})
	}
	return out
}
