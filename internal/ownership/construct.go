package ownership

import (
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// exempt reports whether an access through x at instruction at is not a
// use of shared state: x derives from a value received from a channel
// (rule 4: the receiver owns it), or from an object created in fn that is
// still private at at (rule 3: construction; see objects.Index.Private).
func (e *engine) exempt(fn *ssa.Function, x ssa.Value, at ssa.Instruction) bool {
	b := base(x)
	switch b := b.(type) {
	case *ssa.UnOp:
		return b.Op == token.ARROW
	case *ssa.Select:
		return true
	}
	if o, ok := e.objects().Origin(fn, b).(*ssa.Alloc); ok { // allocated here (rule 3)
		return e.objects().Private(o, at)
	}
	return false
}

// objects is the package's value-identity index (a bare one in unit tests
// without goroutine roots).
func (e *engine) objects() *objects.Index {
	if e.ctx != nil && e.ctx.Objects != nil {
		return e.ctx.Objects
	}
	if e.bareObjects == nil {
		e.bareObjects = objects.New(nil, nil)
	}
	return e.bareObjects
}

// base strips selections, indexing and conversions to the value an access
// is rooted at, seen through variables stored once (objects.Underlying).
func base(v ssa.Value) ssa.Value {
	for range 32 {
		v = objects.Underlying(v)
		switch x := v.(type) {
		case *ssa.FieldAddr:
			v = x.X
		case *ssa.Field:
			v = x.X
		case *ssa.IndexAddr:
			v = x.X
		case *ssa.Index:
			v = x.X
		case *ssa.Extract:
			v = x.Tuple
		case *ssa.TypeAssert:
			v = x.X
		default:
			return v
		}
	}
	return v
}
