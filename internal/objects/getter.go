package objects

import (
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A getter (`func (b *backend) BatchTx() *batchTx { return b.tx }`) is a
// field selection written as a call: `b.BatchTx().Lock()` and
// `b.tx.Unlock()` lock and unlock one mutex, and two calls of the getter
// return one object. Paths see through a call of a function of the
// package whose body only selects fields of a parameter and returns the
// result (etcd's backend.BatchTx, locked through the getter in one place
// and through the field in another).

// getterPath returns, for a call of a getter, the value the result is
// selected from and the selections, root first. An interface call whose
// interface, declared in the package, has one implementation there is a
// call of that implementation; a method returning its receiver selects
// nothing (`s.Current()` is s).
func getterPath(call *ssa.Call) (ssa.Value, []Part, bool) {
	callee, args, result, ok := getterCall(call)
	if !ok {
		return nil, nil, false
	}
	root, parts := SplitPath(callee, result)
	i := ParamIndex(root, "p")
	if i < 0 || i >= len(args) || len(parts) == 0 && (i != 0 || callee.Signature.Recv() == nil) {
		return nil, nil, false // not a selection from a parameter, nor the receiver
	}
	for _, p := range parts {
		if strings.HasPrefix(p.Name, "[") || strings.HasPrefix(p.Name, "(") {
			return nil, nil, false
		}
	}
	return args[i], parts, true
}

// getterCall returns, for a call of a function whose one block only
// selects fields and returns one, the function run, the call's arguments
// (the receiver first for an interface call) and the value it returns.
func getterCall(call *ssa.Call) (*ssa.Function, []ssa.Value, ssa.Value, bool) {
	callee, args := call.Call.StaticCallee(), call.Call.Args
	if call.Call.IsInvoke() {
		callee, args = soleImplementation(call), append([]ssa.Value{call.Call.Value}, args...)
	}
	if callee == nil || len(callee.Blocks) != 1 || len(callee.FreeVars) > 0 || callee.Recover != nil {
		return nil, nil, nil, false
	}
	instrs := callee.Blocks[0].Instrs
	ret, ok := instrs[len(instrs)-1].(*ssa.Return)
	if !ok || len(ret.Results) != 1 {
		return nil, nil, nil, false
	}
	for _, instr := range instrs[:len(instrs)-1] {
		switch x := instr.(type) {
		case *ssa.FieldAddr, *ssa.Field, *ssa.DebugRef:
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return nil, nil, nil, false
			}
		default:
			return nil, nil, nil, false
		}
	}
	return callee, args, ret.Results[0], true
}

// throughGetter is what a getter call returns, as a value of the caller
// when the getter returns a parameter, else of the getter.
func throughGetter(call *ssa.Call) ssa.Value {
	callee, args, result, ok := getterCall(call)
	if !ok {
		return nil
	}
	if p, ok := result.(*ssa.Parameter); ok {
		if i := slices.Index(callee.Params, p); i >= 0 && i < len(args) {
			return args[i]
		}
		return nil
	}
	return result
}

// soleImpls: the method of the one implementation, nil for none or several.
var soleImpls pkgCache[implKey, *types.Func]

type implKey struct {
	recv   types.Type
	method string
	// delegating: a type with the method promoted from an embedded
	// interface counts as no implementation (see ReceivingImplementation).
	delegating bool
}

// soleImplementation returns the method an interface call runs when its
// interface is declared in the calling package and one named type of
// that package implements it; nil otherwise.
func soleImplementation(call *ssa.Call) *ssa.Function {
	return SoleImplementation(call.Parent(), &call.Call)
}

// SoleImplementation is soleImplementation for the interface call c made
// in fn.
func SoleImplementation(fn *ssa.Function, c *ssa.CallCommon) *ssa.Function {
	return soleImplementationOf(fn, c, false)
}

// ReceivingImplementation is SoleImplementation where a type that has the
// method from an embedded interface field is no candidate: it hands the
// call on to the implementation it embeds (istio's Environment embedding
// its mesh Watcher), so what the call receives (a handler registered
// through it) ends up in that implementation. For following values, not
// effects: the embedding type's value may wrap another implementation.
func ReceivingImplementation(fn *ssa.Function, c *ssa.CallCommon) *ssa.Function {
	return soleImplementationOf(fn, c, true)
}

func soleImplementationOf(fn *ssa.Function, c *ssa.CallCommon, delegating bool) *ssa.Function {
	m := c.Method
	if fn == nil || fn.Pkg == nil || m == nil || m.Pkg() != fn.Pkg.Pkg {
		return nil
	}
	key := implKey{c.Value.Type(), m.Name(), delegating}
	obj, ok := soleImpls.load(fn.Pkg, key)
	if !ok {
		obj = findSoleImplementation(fn.Pkg, key.recv, m.Name(), delegating)
		soleImpls.store(fn.Pkg, key, obj)
	}
	if obj == nil {
		return nil
	}
	return fn.Prog.FuncValue(obj)
}

func findSoleImplementation(pkg *ssa.Package, recv types.Type, name string, delegating bool) *types.Func {
	iface, ok := recv.Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	var found *types.Func
	for _, mem := range pkg.Members {
		t, ok := mem.(*ssa.Type)
		if !ok {
			continue
		}
		for _, typ := range []types.Type{t.Type(), types.NewPointer(t.Type())} {
			if _, isIface := typ.Underlying().(*types.Interface); isIface || !types.Implements(typ, iface) {
				continue
			}
			obj, _, _ := types.LookupFieldOrMethod(typ, false, pkg.Pkg, name)
			f, ok := obj.(*types.Func)
			if !ok {
				continue
			}
			if delegating && types.IsInterface(f.Signature().Recv().Type()) {
				continue // promoted from an embedded interface: it hands the call on
			}
			if found != nil || NamedOf(f.Signature().Recv().Type()) != t.Type() {
				return nil // several implementations, or one promoted from an embedded field
			}
			found = f
			break // T's methods are *T's too
		}
	}
	return found
}
