package program

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// FuncName is how diagnostics name a function: "run", "Consumer.run",
// "Consumer.run.func1" for the first closure in it, "kgo.NewClient" for a
// function of another package.
func FuncName(fn *ssa.Function, from *types.Package) string {
	if fn == nil {
		return "?"
	}
	if parent := fn.Parent(); parent != nil {
		idx := 0
		for i, anon := range parent.AnonFuncs {
			if anon == fn {
				idx = i + 1
			}
		}
		return FuncName(parent, from) + ".func" + itoa(idx)
	}
	if o := fn.Origin(); o != nil {
		fn = o
	}
	name := fn.Name()
	if recv := fn.Signature.Recv(); recv != nil {
		name = typeName(recv.Type()) + "." + name
	}
	if pkg := fn.Pkg; pkg != nil && pkg.Pkg != from {
		name = pkg.Pkg.Name() + "." + name
	}
	return name
}

// ObjName names a types.Func of any package for diagnostics, like FuncName.
func ObjName(f *types.Func, from *types.Package) string {
	name := f.Name()
	if sig, ok := f.Type().(*types.Signature); ok && sig.Recv() != nil {
		name = typeName(sig.Recv().Type()) + "." + name
	}
	if f.Pkg() != nil && f.Pkg() != from {
		name = f.Pkg().Name() + "." + name
	}
	return name
}

func typeName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		return t.Obj().Name()
	case *types.Interface:
		return "interface"
	}
	return strings.TrimPrefix(t.String(), "*")
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
