package roots

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/program"
)

// scan records fn's synchronous call edges, the roots its instructions
// create (go statements, asynchronous APIs, spawns parameters, handler
// conversions) and the functions whose address escapes from it.
func (b *builder) scan(fn *ssa.Function) {
	for _, blk := range fn.Blocks {
		for _, instr := range blk.Instrs {
			switch in := instr.(type) {
			case *ssa.Go:
				b.scanGo(in)
			case ssa.CallInstruction:
				b.scanCall(fn, in)
			}
			b.scanEscapes(instr)
		}
	}
}

func (b *builder) scanGo(in *ssa.Go) {
	target := b.local(in.Call.StaticCallee())
	if target == nil {
		return
	}
	// Function values handed to the new goroutine are assumed to be
	// called on it: go each(xs, c.apply) runs apply there.
	for _, arg := range in.Call.Args {
		if f := b.funcValue(arg); f != nil && f != target {
			b.c.calls[target] = append(b.c.calls[target], Edge{Callee: f, Site: in.Pos()})
		}
	}
	if _, ok := RunsAs(b.p.FuncDecl(target)); ok {
		return // an entry or serialized function is a root of its own, with its role
	}
	b.addRoot(&Root{Kind: KindGo, Func: target, Pos: in.Pos(), Via: "go statement"})
}

// addForeignRoot adds a root that a library or a spawns parameter starts,
// unless its function runs as a role whoever starts it (RunsAs): then its
// own entry or serialized root, added by declaredRoot, says how it runs.
func (b *builder) addForeignRoot(r *Root) {
	if _, ok := RunsAs(b.p.FuncDecl(r.Func)); ok {
		return
	}
	b.addRoot(r)
}

func (b *builder) scanCall(fn *ssa.Function, in ssa.CallInstruction) {
	call := in.Common()
	callee := call.StaticCallee()
	if local := b.local(callee); local != nil {
		b.c.calls[fn] = append(b.c.calls[fn], Edge{Callee: local, Site: in.Pos()})
	}
	if call.IsInvoke() {
		for _, impl := range b.implementations(call.Method) {
			b.c.calls[fn] = append(b.c.calls[fn], Edge{Callee: impl, Site: in.Pos()})
		}
	}
	args := call.Args
	if callee != nil && callee.Signature.Recv() != nil && !call.IsInvoke() && len(args) > 0 {
		args = args[1:] // receiver
	}
	var apiName string
	var spawns func(int) bool
	looked := false
	for i, arg := range args {
		target := b.funcValue(arg)
		if _, isFunc := arg.Type().Underlying().(*types.Signature); target == nil && !isFunc {
			continue
		}
		if !looked { // most calls pass no function: name the callee only when one does
			apiName, spawns = b.calleeInfo(call, callee)
			looked = true
		}
		api, async := b.asyncAPI(apiName, i)
		async = async && apiName != ""
		if async || spawns != nil && spawns(i) {
			b.c.asyncArgs[in] = append(b.c.asyncArgs[in], arg)
		}
		if target == nil {
			continue // a func value read from elsewhere: AsyncArgs has it
		}
		if async {
			b.c.escapes[target] = true
			b.addForeignRoot(&Root{Kind: KindAsync, Func: target, Pos: in.Pos(), Via: api.Display})
			continue
		}
		if spawns != nil && spawns(i) {
			b.c.escapes[target] = true
			b.addForeignRoot(&Root{Kind: KindAsync, Func: target, Pos: in.Pos(), Via: program.FuncName(callee, b.p.Pass.Pkg)})
			continue
		}
		// Any other call is assumed to call its function argument on the
		// caller's goroutine (sort.Slice, slices.SortFunc...), unless it is
		// this package's function and starts it or hands it on (handoff.go).
		if local := b.local(callee); local != nil && !call.IsInvoke() {
			switch b.argUse(local, i) {
			case useStarts:
				b.c.escapes[target] = true
				b.addForeignRoot(&Root{Kind: KindAsync, Func: target, Pos: in.Pos(), Via: program.FuncName(callee, b.p.Pass.Pkg)})
				continue
			case useHandsOff:
				b.c.escapes[target] = true
				continue
			}
		}
		b.c.calls[fn] = append(b.c.calls[fn], Edge{Callee: target, Site: in.Pos()})
	}
}

// calleeInfo returns the callee's FullName for the async table and, when it
// declares //confined:spawns, a test for the spawned parameter.
func (b *builder) calleeInfo(call *ssa.CallCommon, callee *ssa.Function) (string, func(int) bool) {
	var obj *types.Func
	switch {
	case call.IsInvoke():
		obj = call.Method
	case callee != nil:
		obj, _ = callee.Object().(*types.Func)
	}
	if obj == nil {
		return "", nil
	}
	obj = obj.Origin()
	var spawns func(int) bool
	for _, it := range declItems(b.p.Decl(obj)) {
		if it.Verb == string(directive.Spawns) {
			param := it.Param
			prev := spawns
			spawns = func(i int) bool { return i == param || (prev != nil && prev(i)) }
		}
	}
	return obj.FullName(), spawns
}

// scanEscapes marks function values used other than as a callee or an
// argument of a call: stored, converted to an interface, returned...
func (b *builder) scanEscapes(instr ssa.Instruction) {
	var call *ssa.CallCommon
	if ci, ok := instr.(ssa.CallInstruction); ok {
		call = ci.Common()
	}
	if _, ok := instr.(*ssa.MakeClosure); ok {
		return // its Fn operand is the closure body, not a use of a value
	}
	for _, op := range instr.Operands(nil) {
		if op == nil || *op == nil {
			continue
		}
		target := b.funcValue(*op)
		if target == nil {
			continue
		}
		if call != nil {
			continue // callee or argument: handled by scanCall
		}
		if conv, ok := instr.(*ssa.ChangeType); ok {
			if via, ok := asyncConversions[typeKey(conv.Type())]; ok {
				b.c.escapes[target] = true
				b.addForeignRoot(&Root{Kind: KindInterface, Func: target, Pos: conv.Pos(), Via: via})
				continue
			}
		}
		if _, ok := instr.(*ssa.DebugRef); ok {
			continue
		}
		b.c.escapes[target] = true
	}
}

func typeKey(t types.Type) string {
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		return n.Obj().Pkg().Path() + "." + n.Obj().Name()
	}
	return ""
}

// funcValue returns the package function a value denotes: a function, a
// closure over one, or a bound method value.
func (b *builder) funcValue(v ssa.Value) *ssa.Function {
	switch v := v.(type) {
	case *ssa.Function:
		return b.local(v)
	case *ssa.MakeClosure:
		if fn, ok := v.Fn.(*ssa.Function); ok {
			return b.local(fn)
		}
	}
	return nil
}

// local maps fn to the package's own source function: generic
// instantiations to their origin, method-value wrappers to the method.
// It returns nil for functions of other packages.
func (b *builder) local(fn *ssa.Function) *ssa.Function {
	if fn == nil {
		return nil
	}
	if b.p.FuncSet[fn] {
		return fn
	}
	if o := fn.Origin(); o != nil && b.p.FuncSet[o] {
		return o
	}
	if fn.Synthetic != "" {
		if obj, ok := fn.Object().(*types.Func); ok && obj.Pkg() == b.p.Pass.Pkg {
			if m := fn.Prog.FuncValue(obj.Origin()); m != nil && b.p.FuncSet[m] {
				return m
			}
		}
	}
	return nil
}

// declItems returns d's items; d is nil for undeclared objects.
func declItems(d *facts.Decl) []facts.DeclItem {
	if d == nil {
		return nil
	}
	return d.Items
}
