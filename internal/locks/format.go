package locks

import (
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/program"
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

// formatted appends to out, whose first target is the callee of a call
// with arguments args (an interface call's receiver first), the String
// and Error methods the callee calls on its operands, the MarshalJSON
// method of what it marshals (marshal.go) and the Write method of the
// writer it writes to (written.go).
func (e *engine) formatted(args []ssa.Value, out []target) []target {
	fn := out[0].fn
	if fn.Pkg == nil || len(args) == 0 {
		return out
	}
	out = e.marshalled(fn, args, out)
	out = e.written(fn, args, out)
	format, cond, ok := e.formatIndex(fn, 0)
	if !ok || format >= len(args)-1 {
		return out
	}
	for _, sc := range e.stringCalls(args, format) {
		out = append(out, target{fn: sc.fn, vals: []ssa.Value{sc.operand}, exact: sc.exact, cond: cond})
	}
	return out
}

// stringCall is a String or Error method a formatting call runs on one
// of its operands; exact as stringMethod says.
type stringCall struct {
	fn      *ssa.Function
	operand ssa.Value
	exact   bool
}

// stringCalls returns the String and Error methods a formatting call
// with arguments args runs on the operands of its last, ...any argument:
// those whose verb in args[format], a constant, calls the method (every
// operand when format is -1, print-style); none when the format is not
// known.
func (e *engine) stringCalls(args []ssa.Value, format int) []stringCall {
	if len(args) == 0 || format >= len(args) {
		return nil
	}
	operands := variadic(args[len(args)-1])
	var calls []bool
	if format >= 0 {
		c, ok := objects.Underlying(args[format]).(*ssa.Const)
		if !ok || c.Value == nil || c.Value.Kind() != constant.String {
			return nil // a format not known here
		}
		calls = stringVerbs(constant.StringVal(c.Value), len(operands))
	}
	var out []stringCall
	for i, x := range operands {
		if x == nil || calls != nil && !calls[i] {
			continue
		}
		if m, exact := e.stringMethod(x.Type()); m != nil {
			out = append(out, stringCall{m, x, exact})
		}
	}
	return out
}

// formatIndex returns the index in a call's arguments (a method's
// receiver counted) of fn's format, -1 for print-style functions, the
// conditional steps of its formatting, and whether fn formats its
// operands: a function of formatFuncs, or a wrapper of one in this package
// (depth wrappers in already).
func (e *engine) formatIndex(fn *ssa.Function, depth int) (format, cond int, ok bool) {
	pkg := fn.Pkg.Pkg.Path()
	if format, ok := formatFuncs[pkg][fn.Name()]; ok {
		if pkg == "log/slog" {
			cond = 1 // a JSON handler marshals instead
		}
		if format >= 0 && fn.Signature.Recv() != nil {
			format++
		}
		return format, cond, true
	}
	w := e.formatWrapper(fn, depth)
	if w == nil {
		return 0, 0, false
	}
	return w.format, w.cond, true
}

// wrapper describes a package function that formats its own operands
// through a formatting function: `func (m *Map) warnf(format string, args
// ...any) { m.logger.Printf("WARN "+format, args...) }`.
type wrapper struct {
	format int // the index of its format parameter, -1 for print-style
	cond   int // 1 when it formats on some paths only
}

// maxWrapperDepth bounds wrappers of wrappers.
const maxWrapperDepth = 2

// formatWrapper returns fn as a wrapper, nil when it is not one: it
// passes its variadic ...any parameter on, whole, to a formatting
// function, with its own format parameter (maybe behind a constant
// prefix without verbs) as that function's format.
func (e *engine) formatWrapper(fn *ssa.Function, depth int) *wrapper {
	if w, seen := e.wrappers[fn]; seen {
		return w
	}
	if e.wrappers == nil {
		e.wrappers = map[*ssa.Function]*wrapper{}
	}
	e.wrappers[fn] = nil
	if depth > maxWrapperDepth || fn.Pkg != e.p.SSA.Pkg || len(fn.Blocks) == 0 || !fn.Signature.Variadic() || len(fn.Params) == 0 {
		return nil
	}
	args := fn.Params[len(fn.Params)-1]
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			c, ok := instr.(ssa.CallInstruction)
			if !ok || len(c.Common().Args) == 0 || c.Common().Args[len(c.Common().Args)-1] != args {
				continue
			}
			callee := c.Common().StaticCallee()
			if callee == nil || callee.Pkg == nil {
				continue
			}
			inner, cond, ok := e.formatIndex(callee, depth+1)
			if !ok {
				continue
			}
			w := &wrapper{format: -1, cond: cond}
			if inner >= 0 {
				w.format = formatParam(fn, c.Common().Args[inner])
				if w.format < 0 {
					continue
				}
			}
			if !dominatesAll(b, returnBlocks(fn)) {
				w.cond = 1
			}
			e.wrappers[fn] = w
			return w
		}
	}
	return nil
}

// formatParam returns the index of fn's parameter that v is, or is with
// a constant prefix or suffix that has no verb; -1 otherwise.
func formatParam(fn *ssa.Function, v ssa.Value) int {
	if b, ok := v.(*ssa.BinOp); ok && b.Op == token.ADD {
		if c, ok := b.X.(*ssa.Const); ok && noVerb(c) {
			v = b.Y
		} else if c, ok := b.Y.(*ssa.Const); ok && noVerb(c) {
			v = b.X
		}
	}
	for i, p := range fn.Params {
		if p == v {
			return i
		}
	}
	return -1
}

func noVerb(c *ssa.Const) bool {
	return c.Value != nil && c.Value.Kind() == constant.String && !strings.Contains(constant.StringVal(c.Value), "%")
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
		for _, val := range storedAt(ia) {
			if mi, ok := val.(*ssa.MakeInterface); ok {
				out[i] = mi.X
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
		return e.implicitCall(t, sel, obj)
	}
	return nil, false
}

// implicitCall returns the method obj, selected by sel on a value of
// static type t, that a library calls on that value (fmt's String,
// encoding/json's MarshalJSON); exact when it has a pointer receiver and
// t is that pointer (a value receiver works on a copy: its locks are not
// the caller's).
func (e *engine) implicitCall(t types.Type, sel *types.Selection, obj *types.Func) (*ssa.Function, bool) {
	fn := e.p.SSA.Pkg.Prog.FuncValue(obj)
	if fn == nil {
		return nil, false
	}
	_, ptrRecv := obj.Signature().Recv().Type().(*types.Pointer)
	_, ptrT := t.(*types.Pointer)
	return e.canonical(fn), ptrRecv && ptrT && len(sel.Index()) == 1
}

// implicitMethod returns the method name of the concrete type t that a
// library calls on a value of it (encoding/json's MarshalJSON, fmt.Fprint's
// Write), when it has params parameters and results results; exact as
// implicitCall says.
func (e *engine) implicitMethod(t types.Type, name string, params, results int) (*ssa.Function, bool) {
	if types.IsInterface(t) {
		return nil, false
	}
	sel := e.p.SSA.Pkg.Prog.MethodSets.MethodSet(t).Lookup(nil, name)
	if sel == nil {
		return nil, false
	}
	obj, ok := sel.Obj().(*types.Func)
	if !ok || obj.Signature().Params().Len() != params || obj.Signature().Results().Len() != results {
		return nil, false
	}
	return e.implicitCall(t, sel, obj)
}

func returnsString(f *types.Func) bool {
	sig := f.Signature()
	if sig.Params().Len() != 0 || sig.Results().Len() != 1 {
		return false
	}
	b, ok := sig.Results().At(0).Type().Underlying().(*types.Basic)
	return ok && b.Kind() == types.String
}

// formattedInvoke appends to out, for a call of a logger interface's
// method that the package cannot resolve (`Logger.Printf("%v", h)` on a
// StdLogger var pointing at another package's logger), the String and
// Error methods it would call on its operands: a method named like
// fmt's and log's (Printf, Infof, Println, Warn...) taking (string,
// ...any) or (...any) formats them, as those do. It may not (a discarding
// logger, a level filter): conditional, as log/slog's.
func (e *engine) formattedInvoke(call *ssa.CallCommon, out []target) []target {
	if len(out) > 0 || call.Method == nil {
		return out
	}
	format, ok := loggerMethod(call.Method)
	if !ok {
		return out
	}
	for _, sc := range e.stringCalls(call.Args, format) {
		label := program.ObjName(call.Method, e.p.Pass.Pkg) + " -> " + e.funcName(sc.fn)
		out = append(out, target{fn: sc.fn, vals: []ssa.Value{sc.operand}, exact: sc.exact, cond: 1, label: label})
	}
	return out
}

// loggerMethod reports whether m has a logging method's name and
// signature, with the index of its format parameter (-1 for print-style).
func loggerMethod(m *types.Func) (format int, ok bool) {
	sig, _ := m.Type().(*types.Signature)
	if sig == nil || !sig.Variadic() || !anySlice(sig.Params().At(sig.Params().Len()-1).Type()) {
		return 0, false
	}
	name := m.Name()
	switch sig.Params().Len() {
	case 1:
		switch name {
		case "Print", "Println", "Debug", "Info", "Warn", "Warning", "Error", "Fatal", "Panic", "Trace", "Log", "Logln":
			return -1, true
		}
	case 2:
		if b, ok := sig.Params().At(0).Type().Underlying().(*types.Basic); !ok || b.Kind() != types.String {
			return 0, false
		}
		switch name {
		case "Printf", "Debugf", "Infof", "Warnf", "Warningf", "Errorf", "Fatalf", "Panicf", "Tracef", "Logf":
			return 0, true
		}
	}
	return 0, false
}

// anySlice reports whether t is []any.
func anySlice(t types.Type) bool {
	s, ok := t.(*types.Slice)
	if !ok {
		return false
	}
	it, ok := s.Elem().Underlying().(*types.Interface)
	return ok && it.Empty()
}
