package infer

import (
	"go/token"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// spawns proposes //confined:spawns for functions whose func-typed
// parameter reaches another goroutine, so that a pool's Submit is not
// assumed to run its job synchronously.
func (s *state) spawns() []Suggestion {
	called := s.calledOnGoroutines()
	var out []Suggestion
	for _, fn := range s.p.Funcs {
		obj, ok := fn.Object().(*types.Func)
		if !ok || fn.Parent() != nil || s.decls[obj] == nil {
			continue
		}
		if _, ok := s.p.FuncDecl(fn).Has(string(directive.Spawns)); ok {
			continue
		}
		recv := 0
		if fn.Signature.Recv() != nil {
			recv = 1
		}
		for i, p := range fn.Params[recv:] {
			if _, isFunc := p.Type().Underlying().(*types.Signature); !isFunc || p.Name() == "_" {
				continue
			}
			why, ok := s.spawned(fn, i+recv, called, 0)
			if !ok {
				continue
			}
			out = append(out, Suggestion{
				Rule: "suggest-spawns", Pos: fn.Pos(), Node: s.decls[obj], Directive: "spawns " + p.Name(),
				Subject: s.name(fn), Evidence: p.Name() + " " + why, Score: zScore(2, 2),
				spec: obj.FullName() + ":arg" + strconv.Itoa(i),
			})
		}
	}
	return out
}

// spawned reports whether fn's parameter i reaches another goroutine,
// and how: called in a go statement or in a function run on another
// goroutine, handed to an asynchronous API, a spawns parameter or a
// package function that spawns it, or sent or stored where a goroutine
// calls what it finds.
func (s *state) spawned(fn *ssa.Function, i int, called map[string]string, depth int) (string, bool) {
	if depth > 4 {
		return "", false
	}
	param := fn.Params[i]
	is := func(g *ssa.Function, v ssa.Value) bool {
		_, u := s.ctx.Objects.Resolve(g, v)
		return u == param
	}
	for _, g := range objects.Nested(fn) {
		for _, b := range g.Blocks {
			for _, instr := range b.Instrs {
				switch in := instr.(type) {
				case *ssa.Go:
					if is(g, in.Call.Value) {
						return "is started by a go statement", true
					}
					for _, a := range in.Call.Args {
						if is(g, a) {
							return "is handed to a go statement", true
						}
					}
				case ssa.CallInstruction:
					if r := s.ctx.RootOf(g); r != nil && r.Foreign() && is(g, in.Common().Value) {
						return "is called on " + r.Describe(), true
					}
					if why, ok := s.spawnedByCall(g, in.Common(), is, called, depth); ok {
						return why, true
					}
				case *ssa.Send:
					if is(g, in.X) {
						if key := s.keyOf(g, in.Chan, "chan:"); called[key] != "" {
							return "is sent on " + s.text(in.Chan) + ", whose values " + called[key], true
						}
					}
				case *ssa.Store:
					if is(g, in.Val) || appends(in.Val, func(v ssa.Value) bool { return is(g, v) }) {
						if key := s.keyOf(g, in.Addr, "field:"); called[key] != "" {
							return "is stored in " + s.text(in.Addr) + ", whose values " + called[key], true
						}
					}
				}
			}
		}
	}
	return "", false
}

// spawnedByCall reports whether a call hands the parameter to another
// goroutine: an asynchronous API, a spawns parameter, or a package
// function that spawns it.
func (s *state) spawnedByCall(g *ssa.Function, c *ssa.CallCommon, is func(*ssa.Function, ssa.Value) bool, called map[string]string, depth int) (string, bool) {
	callee := c.StaticCallee()
	args := c.Args
	recv := 0
	if callee != nil && callee.Signature.Recv() != nil && !c.IsInvoke() {
		recv = 1
	}
	for j, a := range args {
		if !is(g, a) || j < recv {
			continue
		}
		var obj *types.Func
		switch {
		case c.IsInvoke():
			obj = c.Method
		case callee != nil:
			obj, _ = callee.Object().(*types.Func)
		}
		if obj == nil {
			continue
		}
		if api, ok := roots.Default.Lookup(obj.Origin().FullName(), j-recv); ok {
			return "is handed to " + api.Display, true
		}
		for _, it := range s.declItems(obj) {
			if it.Verb == string(directive.Spawns) && it.Param == j-recv {
				return "is handed to " + program.ObjName(obj, s.p.Pass.Pkg) + ", which spawns it", true
			}
		}
		if local := s.local(callee); local != nil && local != g {
			if why, ok := s.spawned(local, j, called, depth+1); ok {
				return "is handed to " + s.name(local) + ", where it " + why, true
			}
		}
	}
	return "", false
}

// calledOnGoroutines maps the fields and channels whose values functions
// running on other goroutines call ("chan:"/"field:" and the class key)
// to a phrase saying who.
func (s *state) calledOnGoroutines() map[string]string {
	out := map[string]string{}
	for _, fn := range s.p.Funcs {
		var foreign *roots.Root
		for _, rc := range s.ctx.Of(fn) {
			if rc.Root.Foreign() {
				foreign = rc.Root
				break
			}
		}
		if foreign == nil {
			continue
		}
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				c, ok := instr.(ssa.CallInstruction)
				if !ok || c.Common().IsInvoke() {
					continue
				}
				switch c.Common().Value.(type) {
				case *ssa.Function, *ssa.Builtin, *ssa.MakeClosure:
					continue
				}
				for _, key := range s.keysOf(fn, c.Common().Value, 0) {
					if out[key] == "" {
						out[key] = s.name(fn) + " calls on " + foreign.Describe()
					}
				}
			}
		}
	}
	return out
}

// keysOf names where a called func value comes from: the fields it was
// loaded from and the channels it was received from.
func (s *state) keysOf(fn *ssa.Function, v ssa.Value, depth int) []string {
	if depth > 8 {
		return nil
	}
	fn, v = s.ctx.Objects.Resolve(fn, v)
	switch x := v.(type) {
	case *ssa.UnOp:
		if x.Op == token.ARROW {
			return []string{s.keyOf(fn, x.X, "chan:")}
		}
		if fa, ok := x.X.(*ssa.FieldAddr); ok {
			return []string{s.keyOf(fn, fa, "field:")}
		}
		return s.keysOf(fn, x.X, depth+1)
	case *ssa.Extract:
		if sel, ok := x.Tuple.(*ssa.Select); ok {
			var out []string
			for _, st := range sel.States {
				if st.Dir == types.RecvOnly {
					out = append(out, s.keyOf(fn, st.Chan, "chan:"))
				}
			}
			return out
		}
		return s.keysOf(fn, x.Tuple, depth+1)
	case *ssa.IndexAddr:
		return s.keysOf(fn, x.X, depth+1)
	case *ssa.Index:
		return s.keysOf(fn, x.X, depth+1)
	case *ssa.Lookup:
		return s.keysOf(fn, x.X, depth+1)
	case *ssa.Slice:
		return s.keysOf(fn, x.X, depth+1)
	case *ssa.Next:
		return s.keysOf(fn, x.Iter, depth+1)
	case *ssa.Range:
		return s.keysOf(fn, x.X, depth+1)
	case *ssa.Call:
		var out []string
		if b, ok := x.Call.Value.(*ssa.Builtin); ok && b.Name() == "append" {
			for _, a := range x.Call.Args {
				out = append(out, s.keysOf(fn, a, depth+1)...)
			}
		}
		return out
	}
	return nil
}

// keyOf names a channel or field by the field it lives in (the channel
// value loaded from it, or its address), "" when it is none.
func (s *state) keyOf(fn *ssa.Function, v ssa.Value, prefix string) string {
	_, v = s.ctx.Objects.Resolve(fn, v)
	if u, ok := v.(*ssa.UnOp); ok && u.Op == token.MUL {
		v = u.X
	}
	fa, ok := v.(*ssa.FieldAddr)
	if !ok {
		return ""
	}
	st := objects.StructOf(fa.X.Type())
	if st == nil || fa.Field >= st.NumFields() {
		return ""
	}
	return prefix + lockop.ClassKey(st.Field(fa.Field))
}

// appends reports whether v is an append whose arguments include one
// that is(...).
func appends(v ssa.Value, is func(ssa.Value) bool) bool {
	c, ok := v.(*ssa.Call)
	if !ok {
		return false
	}
	if b, ok := c.Call.Value.(*ssa.Builtin); !ok || b.Name() != "append" {
		return false
	}
	for _, a := range c.Call.Args {
		if is(a) {
			return true
		}
		if sl, ok := a.(*ssa.Slice); ok {
			if alloc, ok := sl.X.(*ssa.Alloc); ok && storesInto(alloc, is) {
				return true // append(s, f): f is stored into the varargs array
			}
		}
	}
	return false
}

// storesInto reports whether something that is(...) is stored into an
// element of the array alloc.
func storesInto(alloc *ssa.Alloc, is func(ssa.Value) bool) bool {
	for _, r := range *alloc.Referrers() {
		if ia, ok := r.(*ssa.IndexAddr); ok {
			for _, rr := range *ia.Referrers() {
				if st, ok := rr.(*ssa.Store); ok && is(st.Val) {
					return true
				}
			}
		}
	}
	return false
}

// text is a value as written, for messages.
func (s *state) text(v ssa.Value) string {
	if u, ok := v.(*ssa.UnOp); ok {
		v = u.X
	}
	if t, ok := s.texts[v.Pos()]; ok {
		return t
	}
	if fa, ok := v.(*ssa.FieldAddr); ok {
		if st := objects.StructOf(fa.X.Type()); st != nil && fa.Field < st.NumFields() {
			return lockop.ShortName(st.Field(fa.Field)) // a composite literal's field
		}
	}
	return "a field"
}

// withSpawns recomputes the package's goroutine contexts with the
// suggested spawns parameters as asynchronous APIs.
func withSpawns(p *program.Package, spawns []Suggestion) *roots.Contexts {
	t := roots.NewTable()
	for _, a := range roots.Default.Entries() {
		_ = t.Add(a.FullName + ":arg" + strconv.Itoa(a.Arg))
	}
	for _, sg := range spawns {
		_ = t.Add(sg.spec)
	}
	return roots.Compute(p, t)
}

// declItems returns obj's directives, here or from its package's facts.
func (s *state) declItems(obj types.Object) []facts.DeclItem {
	if d := s.p.Decl(obj); d != nil {
		return d.Items
	}
	return nil
}
