package locks

import (
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// deferredCellValue is what a deferred `func() { unlock() }` calls when
// the defers run at at: what the variable holds there (objects.StoredAt),
// or nil. etcd's lessor Renew keeps `unlock := func() { le.mu.Unlock() }`
// and, on the path that unlocks before waiting, disarms it with `unlock =
// func() {}`: the returns before that release the lock, those after it
// do not.
func deferredCellValue(call *ssa.CallCommon, at ssa.Instruction) ssa.Value {
	cell, _ := deferredCell(call)
	if cell == nil {
		return nil
	}
	return objects.StoredAt(cell, at)
}
