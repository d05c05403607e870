package objects

import (
	"go/token"
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

// getterPath returns, for a call of a getter, the index of the argument
// the result is selected from and the selections, root first.
func getterPath(call *ssa.Call) (int, []Part, bool) {
	callee := call.Call.StaticCallee()
	if callee == nil || len(callee.Blocks) != 1 || len(callee.FreeVars) > 0 || callee.Recover != nil {
		return 0, nil, false
	}
	instrs := callee.Blocks[0].Instrs
	ret, ok := instrs[len(instrs)-1].(*ssa.Return)
	if !ok || len(ret.Results) != 1 {
		return 0, nil, false
	}
	for _, instr := range instrs[:len(instrs)-1] {
		switch x := instr.(type) {
		case *ssa.FieldAddr, *ssa.Field, *ssa.DebugRef:
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return 0, nil, false
			}
		default:
			return 0, nil, false
		}
	}
	root, parts := SplitPath(callee, ret.Results[0])
	i := ParamIndex(root, "p")
	if i < 0 || i >= len(call.Call.Args) || len(parts) == 0 {
		return 0, nil, false // not a selection from a parameter
	}
	for _, p := range parts {
		if strings.HasPrefix(p.Name, "[") || strings.HasPrefix(p.Name, "(") {
			return 0, nil, false
		}
	}
	return i, parts, true
}
