package infer

import (
	"fmt"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// shapes proposes drain and commit on the functions r's goroutine runs
// (r's own and those it calls) whose shape leaves no doubt: a loop over a
// non-blocking select that receives (a drain), a function that hands
// state r owns to another package's Commit* or Mark* function (a commit).
func (s *state) shapes(r *roleInfo) []Suggestion {
	owned := map[string]bool{}
	for _, name := range r.owned {
		owned[name] = true
	}
	var out []Suggestion
	for _, fn := range s.p.Funcs {
		if fn.Parent() != nil || s.decls[fn.Object()] == nil || s.annotated(fn.Object()) || !s.runsOn(fn, r) {
			continue
		}
		subject := s.name(fn)
		if ch, ok := s.drains(fn); ok {
			out = append(out, Suggestion{Rule: "suggest-drain", Pos: fn.Pos(), Node: s.decls[fn.Object()],
				Directive: withRole("drain", r.role), Subject: subject,
				Evidence: fmt.Sprintf("it loops over a non-blocking receive from %s on %s's goroutine", ch, s.name(r.fn)),
				Score:    zScore(2, 2)})
			continue
		}
		if call, reads := s.commits(fn, owned); call != "" && len(reads) > 0 {
			out = append(out, Suggestion{Rule: "suggest-commit", Pos: fn.Pos(), Node: s.decls[fn.Object()],
				Directive: withRole("commit", r.role), Subject: subject,
				Evidence: fmt.Sprintf("it calls %s and reads %s, owned by %s's goroutine", call, strings.Join(reads, ", "), s.name(r.fn)),
				Score:    zScore(2, 2)})
		}
	}
	return out
}

// runsOn reports whether fn runs on r's goroutine (among others).
func (s *state) runsOn(fn *ssa.Function, r *roleInfo) bool {
	for _, rc := range s.ctx.Of(fn) {
		if rc.Root == r.root {
			return true
		}
	}
	return false
}

// drains reports whether fn loops over a select with a default case that
// receives, and names what it receives from.
func (s *state) drains(fn *ssa.Function) (string, bool) {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			sel, ok := instr.(*ssa.Select)
			if !ok || sel.Blocking || !objects.OnCycle(b) {
				continue
			}
			for _, st := range sel.States {
				if st.Dir == types.RecvOnly {
					return s.chanName(st.Chan), true
				}
			}
		}
	}
	return "", false
}

// commitNames are the prefixes of the methods that publish consumer
// progress in the common clients (franz-go CommitRecords, sarama
// MarkOffset, the example broker's CommitOffsets).
var commitNames = []string{"Commit", "MarkOffset", "MarkMessage", "MarkCommit"}

// commits returns the Commit*-like call of another package fn makes, and
// the fields of owned it reads.
func (s *state) commits(fn *ssa.Function, owned map[string]bool) (string, []string) {
	call := ""
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			c, ok := instr.(ssa.CallInstruction)
			if !ok || call != "" {
				continue
			}
			var obj *types.Func
			if c.Common().IsInvoke() {
				obj = c.Common().Method
			} else if callee := c.Common().StaticCallee(); callee != nil {
				obj, _ = callee.Object().(*types.Func)
			}
			if obj == nil || obj.Pkg() == nil || obj.Pkg() == s.p.Pass.Pkg {
				continue
			}
			for _, prefix := range commitNames {
				if strings.HasPrefix(obj.Name(), prefix) {
					call = obj.Name()
				}
			}
		}
	}
	if call == "" {
		return "", nil
	}
	var reads []string
	seen := map[string]bool{}
	for _, st := range s.sites {
		name := fieldName(st.v, st.owner)
		if st.fn == fn && owned[name] && !seen[name] {
			seen[name] = true
			reads = append(reads, name)
		}
	}
	return call, reads
}
