package locks

import (
	"go/constant"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A helper that takes a lock on one error only (`if err == ErrShutdown {
// b.Lock(); b.clearConnection(name); b.Unlock() }`), called with an error
// the caller found not nil, takes it on that failure's path: the caller
// cannot rule that failure out, as it cannot for `err != nil` (vault's
// closeIfShutdown, called with the plugin's error under the backend's
// read lock). The comparison with a package-level error var is a branch
// condition of its own, the var standing for a constant (sentinelOf), and
// decidedHere takes it as known where the value is known not nil.

// sentinelPrefix marks a sentinel error's "constant" in branch conditions.
const sentinelPrefix = "\x00sentinel "

var errorType = types.Universe.Lookup("error").Type().Underlying().(*types.Interface)

// sentinelOf returns the condition value standing for v, a load of a
// package-level var whose type implements error.
func sentinelOf(v ssa.Value) (constant.Value, bool) {
	if !globalLoad(v) || !types.Implements(v.Type(), errorType) {
		return nil, false
	}
	g := v.(*ssa.UnOp).X.(*ssa.Global)
	if g.Pkg == nil {
		return nil, false
	}
	return constant.MakeString(sentinelPrefix + g.Pkg.Pkg.Path() + "." + g.Name()), true
}

// sentinelName is the var a sentinel condition value stands for, "" when
// val is none.
func sentinelName(val constant.Value) string {
	if val == nil || val.Kind() != constant.String {
		return ""
	}
	s, ok := strings.CutPrefix(constant.StringVal(val), sentinelPrefix)
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// sentinelFailure reports whether c, a callee's condition that a value is
// a sentinel error, is one failure of a value s knows is not nil.
func sentinelFailure(c cond, s State) bool {
	return !c.neg && sentinelName(c.val) != "" && condKnown(cond{key: c.key, val: nilConst, neg: true}, s)
}
