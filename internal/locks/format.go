package locks

import (
	"go/constant"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// fmt, log and testing call the String (or Error) method of an operand
// formatted with %v, %s, %q, %x or %X, or printed by Print and Println:
// `c.mu.RLock(); log.Printf("%v", c)` read-locks c.mu again inside
// c.String. The call runs the method of the operand's static type when it
// has one (an operand of interface type could be anything: not followed).
// A method on a value receiver works on a copy: edges only. log/slog
// formats an operand only in text handlers (a JSON handler marshals it):
// its calls are conditional.

// formatFuncs gives, per package and function (or method) name, the index
// of the format argument, -1 for print-style functions (every operand is
// formatted with %v); a method's receiver is not counted.
var formatFuncs = map[string]map[string]int{
	"fmt": {
		"Print": -1, "Println": -1, "Sprint": -1, "Sprintln": -1, "Fprint": -1, "Fprintln": -1,
		"Append": -1, "Appendln": -1, "Printf": 0, "Sprintf": 0, "Errorf": 0, "Fprintf": 1, "Appendf": 1,
	},
	"log": {
		"Print": -1, "Println": -1, "Fatal": -1, "Fatalln": -1, "Panic": -1, "Panicln": -1,
		"Printf": 0, "Fatalf": 0, "Panicf": 0,
	},
	"log/slog": {
		"Debug": -1, "Info": -1, "Warn": -1, "Error": -1, "Log": -1,
		"DebugContext": -1, "InfoContext": -1, "WarnContext": -1, "ErrorContext": -1,
	},
	"testing": {
		"Log": -1, "Error": -1, "Fatal": -1, "Skip": -1,
		"Logf": 0, "Errorf": 0, "Fatalf": 0, "Skipf": 0,
	},
}

// formatted appends to out, whose first target is the static callee of
// call, the String and Error methods the callee calls on its operands.
func (e *engine) formatted(call *ssa.CallCommon, out []target) []target {
	fn := out[0].fn
	if fn.Pkg == nil || len(call.Args) == 0 {
		return out
	}
	pkg := fn.Pkg.Pkg.Path()
	format, ok := formatFuncs[pkg][fn.Name()]
	if !ok {
		return out
	}
	cond := 0
	if pkg == "log/slog" {
		cond = 1
	}
	if format >= 0 && fn.Signature.Recv() != nil {
		format++
	}
	operands := variadic(call.Args[len(call.Args)-1])
	var calls []bool
	if format >= len(call.Args)-1 {
		return out
	}
	if format >= 0 {
		c, ok := objects.Underlying(call.Args[format]).(*ssa.Const)
		if !ok || c.Value == nil || c.Value.Kind() != constant.String {
			return out // a format not known here
		}
		calls = stringVerbs(constant.StringVal(c.Value), len(operands))
	}
	for i, x := range operands {
		if x == nil || calls != nil && !calls[i] {
			continue
		}
		if m, exact := e.stringMethod(x.Type()); m != nil {
			out = append(out, target{fn: m, vals: []ssa.Value{x}, exact: exact, cond: cond})
		}
	}
	return out
}

// variadic returns the operands of a ...any argument built at the call
// (the values converted to any, nil where not known), nil otherwise.
func variadic(arg ssa.Value) []ssa.Value {
	sl, ok := arg.(*ssa.Slice)
	if !ok {
		return nil
	}
	arr, ok := sl.X.(*ssa.Alloc)
	if !ok {
		return nil
	}
	at, ok := arr.Type().(*types.Pointer).Elem().Underlying().(*types.Array)
	if !ok || at.Len() > 64 {
		return nil
	}
	out := make([]ssa.Value, at.Len())
	for _, r := range *arr.Referrers() {
		ia, ok := r.(*ssa.IndexAddr)
		if !ok {
			continue
		}
		c, ok := ia.Index.(*ssa.Const)
		if !ok {
			continue
		}
		i, ok := constant.Int64Val(constant.ToInt(c.Value))
		if !ok || i < 0 || i >= int64(len(out)) {
			continue
		}
		for _, rr := range *ia.Referrers() {
			if st, ok := rr.(*ssa.Store); ok && st.Addr == ia {
				if mi, ok := st.Val.(*ssa.MakeInterface); ok {
					out[i] = mi.X
				}
			}
		}
	}
	return out
}

// stringVerbs reports, for each of n operands, whether format formats it
// with a verb that calls its String or Error method (v without #, s, q, x,
// X, and Errorf's w), following explicit argument indexes and * widths.
func stringVerbs(format string, n int) []bool {
	out := make([]bool, n)
	arg := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		sharp := false
		for ; i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0; i++ {
			sharp = sharp || format[i] == '#'
		}
	spec:
		for i < len(format) {
			switch c := format[i]; {
			case c == '[':
				end := strings.IndexByte(format[i:], ']')
				if end < 0 {
					return out
				}
				if k, err := strconv.Atoi(format[i+1 : i+end]); err == nil {
					arg = k - 1
				}
				i += end + 1
				continue
			case c == '*':
				arg++
			case c == '.' || c >= '0' && c <= '9':
			default:
				break spec
			}
			i++
		}
		if i >= len(format) {
			break
		}
		if format[i] == '%' {
			continue
		}
		if arg >= 0 && arg < n && strings.IndexByte("vsqxXw", format[i]) >= 0 && !(sharp && format[i] == 'v') {
			out[arg] = true
		}
		arg++
	}
	return out
}

// stringMethod returns the method fmt calls to format a value of static
// type t, Error before String, none for a Formatter or an interface type;
// exact when it has a pointer receiver and t is that pointer (a value
// receiver works on a copy: its locks are not the caller's).
func (e *engine) stringMethod(t types.Type) (*ssa.Function, bool) {
	if types.IsInterface(t) {
		return nil, false
	}
	prog := e.p.SSA.Pkg.Prog
	ms := prog.MethodSets.MethodSet(t)
	if ms.Lookup(nil, "Format") != nil {
		return nil, false
	}
	for _, name := range []string{"Error", "String"} {
		sel := ms.Lookup(nil, name)
		if sel == nil {
			continue
		}
		obj, ok := sel.Obj().(*types.Func)
		if !ok || !returnsString(obj) {
			continue
		}
		fn := prog.FuncValue(obj)
		if fn == nil {
			return nil, false
		}
		_, ptrRecv := obj.Signature().Recv().Type().(*types.Pointer)
		_, ptrT := t.(*types.Pointer)
		return e.canonical(fn), ptrRecv && ptrT && len(sel.Index()) == 1
	}
	return nil, false
}

func returnsString(f *types.Func) bool {
	sig := f.Signature()
	if sig.Params().Len() != 0 || sig.Results().Len() != 1 {
		return false
	}
	b, ok := sig.Results().At(0).Type().Underlying().(*types.Basic)
	return ok && b.Kind() == types.String
}
