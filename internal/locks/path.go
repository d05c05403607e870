package locks

import "github.com/confinelint/confinelint/internal/objects"

// Lock paths are the symbolic paths of package objects ("p0.mu",
// "f1.state.mu", "g:pkg.var", "v:t5.a[p1].mu"): relative to the function
// they occur in, rewritten from callee to caller at calls. These are the
// engine's short names for them.
var (
	pathOf     = objects.PathOf
	pathsOf    = objects.PathsOf
	splitPath  = objects.SplitPath
	rootOf     = objects.RootOf
	paramIndex = objects.ParamIndex
	rewrite    = objects.Rewrite
	portable   = objects.Portable
	globalPath = objects.GlobalPath
	pathUnder  = objects.Under
)

type part = objects.Part
