package ownership

import (
	"fmt"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/roots"
)

// handOff is owned state given to a goroutine start: an argument of a go
// statement, or the receiver of a method value registered with an
// asynchronous API.
type handOff struct {
	fn     *ssa.Function
	pos    token.Pos
	src    source
	value  string // as written
	where  string // "the goroutine started by the go statement"
	target string // the function that receives it
	use    use
	known  bool // target is the package's: use says what it does
}

// goHandOffs returns the owned references a go statement passes to its
// new goroutine that the target touches (a closure's captures are judged
// inside it instead).
func (e *engine) goHandOffs(fn *ssa.Function, in *ssa.Go) []handOff {
	target, args := e.callTarget(&in.Call)
	if target != nil {
		if _, entry := e.p.FuncDecl(target).Has("entry"); entry {
			return nil // starting a role: its state is its own
		}
	} else {
		args = in.Call.Args
	}
	var out []handOff
	for i, arg := range args {
		if !isReference(arg.Type()) {
			continue
		}
		s := e.sourceOf(fn, arg)
		if !s.owned {
			continue
		}
		h := handOff{fn: fn, pos: in.Pos(), src: s, value: e.argText(&in.Call, i, arg), where: "the goroutine started by the go statement"}
		if target != nil {
			u, ok := e.paramUse(target, i)
			if !ok {
				continue
			}
			h.target, h.use, h.known = e.name(target), u, true
		} else if callee := in.Call.StaticCallee(); callee != nil {
			h.target = e.name(callee)
		} else {
			h.target = "the function called"
		}
		out = append(out, h)
	}
	return out
}

// asyncHandOffs returns the owned references bound as receivers of method
// values that a call registers as goroutine roots (time.AfterFunc(d,
// ps.flush), a spawns parameter).
func (e *engine) asyncHandOffs(fn *ssa.Function, in ssa.CallInstruction) []handOff {
	var out []handOff
	for _, arg := range in.Common().Args {
		mc, ok := arg.(*ssa.MakeClosure)
		if !ok || len(mc.Bindings) != 1 {
			continue
		}
		method := boundMethod(mc.Fn)
		r := e.asyncRootAt(in.Pos(), method)
		if r == nil || !isReference(mc.Bindings[0].Type()) {
			continue
		}
		s := e.sourceOf(fn, mc.Bindings[0])
		if !s.owned {
			continue
		}
		u, ok := e.paramUse(method, 0)
		if !ok {
			continue
		}
		value := e.valueText(mc.Bindings[0])
		if text, ok := e.exprAt(mc.Pos()); ok {
			value = text
		}
		out = append(out, handOff{fn: fn, pos: in.Pos(), src: s, value: trimMethod(value), where: r.Describe(),
			target: e.name(method), use: u, known: true})
	}
	return out
}

// boundMethod returns the method a bound method value's wrapper calls,
// or nil.
func boundMethod(v ssa.Value) *ssa.Function {
	fn, ok := v.(*ssa.Function)
	if !ok || fn.Synthetic == "" || len(fn.FreeVars) != 1 {
		return nil
	}
	obj, ok := fn.Object().(*types.Func)
	if !ok {
		return nil
	}
	return fn.Prog.FuncValue(obj.Origin())
}

// trimMethod turns "ps.reset" into "ps".
func trimMethod(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return s[:i]
		}
	}
	return s
}

// asyncRootAt returns the asynchronous root a call at pos starts on fn.
func (e *engine) asyncRootAt(pos token.Pos, fn *ssa.Function) *roots.Root {
	if fn == nil {
		return nil
	}
	if e.asyncAt == nil {
		e.asyncAt = map[token.Pos][]*roots.Root{}
		for _, r := range e.ctx.Roots {
			if r.Kind == roots.KindAsync {
				e.asyncAt[r.Pos] = append(e.asyncAt[r.Pos], r)
			}
		}
	}
	for _, r := range e.asyncAt[pos] {
		if r.Func == fn {
			return r
		}
	}
	return nil
}

// checkHandOffs reports the hand-offs made where their state may be
// touched (elsewhere the read of the state is the finding).
func (e *engine) checkHandOffs() {
	for _, h := range e.handOffs {
		if e.loadReported(h.src) {
			continue
		}
		chain := []string{h.target}
		if h.known {
			chain = append(append(chain, h.use.via...), h.use.state)
		}
		if h.value != h.src.state {
			chain = append([]string{h.src.state}, chain...)
		}
		how := "may use it"
		if h.known {
			how = map[kind]string{read: "reads it", write: "writes it", call: "uses it"}[h.use.kind]
		}
		msg := fmt.Sprintf("%s is confined to %s but handed to %s, where %s %s: %s; pass a copy (maps.Clone, slices.Clone) or send it to its new owner on a channel",
			h.value, h.src.role, h.where, h.target, how, diag.Chain(chain...))
		e.findings = append(e.findings, diag.Finding{Pos: h.pos, Fallback: h.fn.Pos(), Rule: "owned-handoff", Message: msg, Chain: e.loadHop(h.src)})
	}
}

// sendSite is a channel send, checked once contexts are known.
type sendSite struct {
	fn   *ssa.Function
	send *ssa.Send
}

// checkSends reports the first touch, after a send of an owned reference,
// of what it points to by the function that sent it: the receiver owns it
// now (rule 4).
func (e *engine) checkSends() {
	for _, ss := range e.sends {
		fn, send := ss.fn, ss.send
		if !isReference(send.X.Type()) {
			continue
		}
		s := e.sourceOf(fn, send.X)
		if !s.owned || e.loadReported(s) {
			continue
		}
		sent := objects.Underlying(send.X)
		def, _ := sent.(ssa.Instruction)
		if def == nil {
			def = send
		}
		if t, name, k, ok := e.touchAfter(fn, send, sent, def); ok {
			value, ok := e.exprAt(send.Pos())
			if !ok {
				value = e.valueText(send.X)
			}
			ch := e.valueText(send.Chan)
			chain := []string{ch + " <- " + value, name}
			if value != s.state {
				chain = append([]string{s.state}, chain...)
			}
			msg := fmt.Sprintf("%s is sent on %s at %s, which hands it to the receiver, but %s afterwards: %s",
				value, ch, e.at(send.Pos()), k.verb(), diag.Chain(chain...))
			hops := append(e.loadHop(s), diag.Hop{Pos: send.Pos(), What: value + " is sent here"})
			e.findings = append(e.findings, diag.Finding{Pos: t.Pos(), Fallback: fn.Pos(), Rule: "use-after-send", Message: msg, Chain: hops})
		}
	}
}

// touchAfter finds the first touch in fn, after send, of what sent
// points to: through it, or by passing it to a package function that
// touches it.
func (e *engine) touchAfter(fn *ssa.Function, send *ssa.Send, sent ssa.Value, def ssa.Instruction) (ssa.Instruction, string, kind, bool) {
	var ops []memOp
	for _, blk := range fn.Blocks {
		for _, instr := range blk.Instrs {
			if instr == send || !objects.Reaches(send, instr, def) {
				continue
			}
			ops = e.memOps(ops[:0], instr)
			for _, op := range ops {
				if derivesFrom(op.base, sent) {
					return op.at, e.opName(op), op.kind, true
				}
			}
			call, ok := instr.(ssa.CallInstruction)
			if !ok {
				continue
			}
			callee, args := e.callTarget(call.Common())
			for j, arg := range args {
				if callee == nil {
					break
				}
				if derivesFrom(arg, sent) {
					if u, ok := e.paramUse(callee, j); ok {
						return instr, diag.Chain(append(append([]string{e.name(callee)}, u.via...), u.state)...), u.kind, true
					}
				}
			}
		}
	}
	return nil, "", read, false
}

// derivesFrom reports whether v is target or selected, indexed or loaded
// from it within the function.
func derivesFrom(v, target ssa.Value) bool {
	for range maxSourceSteps {
		if v = objects.Underlying(v); v == target {
			return true
		}
		if v = selectedFrom(v); v == nil {
			return false
		}
	}
	return false
}

// loadReported reports whether the read of s's state is itself a finding
// (its function runs where the state may not be touched): one finding
// per problem.
func (e *engine) loadReported(s source) bool {
	if s.loadFn == nil {
		return false
	}
	for _, rc := range e.reach[s.loadFn] {
		if judge(rc.Root, s.role) != "" {
			return true
		}
	}
	return false
}

// loadHop is the related-information hop at the read of owned state.
func (e *engine) loadHop(s source) []diag.Hop {
	if s.load == nil || !s.load.Pos().IsValid() {
		return nil
	}
	return []diag.Hop{{Pos: s.load.Pos(), What: s.state + ", owned by " + s.role + ", is read here"}}
}

// at renders a position as "file.go:line".
func (e *engine) at(pos token.Pos) string {
	p := e.p.Pass.Fset.Position(pos)
	return fmt.Sprintf("%s:%d", baseName(p.Filename), p.Line)
}

func baseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' || path[i] == '\\' {
			return path[i+1:]
		}
	}
	return path
}
