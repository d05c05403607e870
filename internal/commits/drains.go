package commits

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// RuleDrainNoReceive is the rule id of a drain that receives nothing.
const RuleDrainNoReceive = "drain-without-receive"

// checkDrains reports every //confined:drain function of the package that
// never receives from a channel, itself or through the functions it calls
// synchronously: a drain is checked, not trusted, and one that receives
// nothing cannot apply what waits in the mailbox. Calling another declared
// drain (of any package) counts as receiving.
func checkDrains(p *program.Package, ctx *roots.Contexts) []diag.Finding {
	if p.Directives == nil || len(p.Directives.Objects) == 0 {
		return nil
	}
	var out []diag.Finding
	memo := map[*ssa.Function]bool{}
	for _, fn := range p.Funcs {
		if _, ok := p.FuncDecl(fn).Has(string(directive.Drain)); !ok || len(fn.Blocks) == 0 {
			continue
		}
		if receives(p, ctx, fn, memo, true) {
			continue
		}
		out = append(out, diag.Finding{
			Pos:      diag.FuncKeyword(p.Pass.Files, fn.Pos()),
			Fallback: fn.Pos(),
			Rule:     RuleDrainNoReceive,
			Message: program.FuncName(fn, p.Pass.Pkg) + " is declared //confined:drain but never receives from a channel, " +
				"neither itself nor through the functions it calls, so it cannot apply the completed work waiting in the mailbox",
		})
	}
	return out
}

// receives reports whether fn, or a function it calls synchronously,
// receives from a channel or calls a declared drain. top is set for the
// drain being checked itself, whose own declaration does not count.
func receives(p *program.Package, ctx *roots.Contexts, fn *ssa.Function, memo map[*ssa.Function]bool, top bool) bool {
	if done, seen := memo[fn]; seen {
		return done
	}
	memo[fn] = false // a recursive call proves nothing
	found := false
	for _, blk := range fn.Blocks {
		for _, instr := range blk.Instrs {
			if found = receivesHere(p, instr); found {
				break
			}
		}
		if found {
			break
		}
	}
	for _, e := range ctx.Calls(fn) {
		if found {
			break
		}
		if _, isDrain := p.FuncDecl(e.Callee).Has(string(directive.Drain)); isDrain && e.Callee != fn {
			found = true
			break
		}
		found = receives(p, ctx, e.Callee, memo, false)
	}
	if !top {
		memo[fn] = found
	}
	return found
}

// receivesHere reports whether instr receives from a channel (<-ch, a
// select with a receive case, range over a channel) or calls another
// package's declared drain.
func receivesHere(p *program.Package, instr ssa.Instruction) bool {
	switch in := instr.(type) {
	case *ssa.UnOp:
		return in.Op == token.ARROW
	case *ssa.Select:
		for _, st := range in.States {
			if st.Dir == types.RecvOnly {
				return true
			}
		}
	case ssa.CallInstruction:
		if callee := in.Common().StaticCallee(); callee != nil {
			if obj, ok := callee.Object().(*types.Func); ok && obj.Pkg() != p.Pass.Pkg {
				_, isDrain := p.Decl(obj).Has(string(directive.Drain))
				return isDrain
			}
		}
	}
	return false
}
