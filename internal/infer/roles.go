package infer

import (
	"fmt"
	"go/token"
	"go/types"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/roots"
)

// roleInfo is an entry candidate: a goroutine's loop and what it owns.
type roleInfo struct {
	fn       *ssa.Function
	root     *roots.Root
	role     string // "" until named
	declared bool   // already //confined:entry
	owned    []string
	recv     string // what its loop receives from, for the message
}

// ownership proposes //confined:control for fields most of whose writes
// run on one entry candidate's goroutine and that another root touches,
// then //confined:entry on those candidates and drain and commit on the
// functions of their goroutines with the plain shapes.
func (s *state) ownership(guarded []Suggestion) []Suggestion {
	s.findEntries()
	if len(s.roles) == 0 {
		return nil
	}
	skip := map[types.Object]bool{}
	for _, g := range guarded {
		for v, n := range s.decls {
			if n == g.Node {
				skip[v] = true
			}
		}
	}
	type claim struct {
		group            []site
		r                *roleInfo
		onRole           int
		writesOn, writes int
		deviants         []site
	}
	var claims []claim
	for _, group := range s.byVar() {
		v := group[0].v
		if s.decls[v] == nil || s.annotated(v) || skip[v] {
			continue
		}
		r, on, deviants := s.owner(group)
		if r == nil || len(deviants) == 0 || !ownType(r.fn, group[0].owner) || s.lockedWrites(r, group) {
			continue
		}
		r.owned = append(r.owned, fieldName(v, group[0].owner))
		c := claim{group: group, r: r, onRole: on, deviants: deviants}
		for _, st := range group {
			if st.write {
				c.writes++
				if s.onlyRole(st.fn) == r {
					c.writesOn++
				}
			}
		}
		claims = append(claims, c)
	}
	s.nameRoles()
	var out []Suggestion
	for _, c := range claims {
		v := c.group[0].v
		var devs []Site
		for _, st := range c.deviants {
			d := s.describe(st)
			d.What += " (" + s.rootsText(st.fn, c.r.root) + ")"
			devs = append(devs, d)
		}
		out = append(out, Suggestion{
			Rule: "suggest-control", Pos: v.Pos(), Node: s.decls[v], Directive: withRole("control", c.r.role),
			Subject:  fieldName(v, c.group[0].owner),
			Evidence: fmt.Sprintf("%d of %d accesses (%d of %d writes) run on %s's goroutine only", c.onRole, c.onRole+len(c.deviants), c.writesOn, c.writes, s.name(c.r.fn)),
			Score:    zScore(c.onRole, c.onRole+len(c.deviants)), Deviants: devs,
		})
	}
	for _, r := range s.sortedRoles() {
		if len(r.owned) == 0 {
			continue
		}
		if !r.declared {
			out = append(out, s.entrySuggestion(r))
		}
		out = append(out, s.shapes(r)...)
	}
	return out
}

// owner returns the entry candidate whose goroutine makes most of the
// group's writes (and at least as many as all other roots together), the
// number of accesses that run only there, and the accesses that run
// elsewhere too.
func (s *state) owner(group []site) (*roleInfo, int, []site) {
	writesOn := map[*roleInfo]int{}
	writes := 0
	for _, st := range group {
		if !st.write {
			continue
		}
		writes++
		if r := s.onlyRole(st.fn); r != nil {
			writesOn[r]++
		}
	}
	var top *roleInfo
	for _, r := range s.sortedRoles() {
		if writesOn[r] > 0 && (top == nil || writesOn[r] > writesOn[top]) {
			top = r
		}
	}
	if top == nil || 2*writesOn[top] <= writes {
		return nil, 0, nil
	}
	on := 0
	var deviants []site
	for _, st := range group {
		reach := s.ctx.Of(st.fn)
		switch {
		case len(reach) == 0:
			// not reached from any root: dead code or a test helper
		case s.onlyRole(st.fn) == top:
			on++
		default:
			deviants = append(deviants, st)
		}
	}
	return top, on, deviants
}

// ownType reports whether fields of owner may belong to the loop fn: those
// of its receiver's type, or package vars for a function. A loop touches
// the fields of many values; the ones of its own struct are what it owns.
func ownType(fn *ssa.Function, owner *types.Named) bool {
	recv := fn.Signature.Recv()
	if recv == nil || owner == nil {
		return recv == nil && owner == nil
	}
	return objects.NamedOf(recv.Type()) == owner
}

// lockedWrites reports whether every write r's goroutine makes to the
// field holds one lock of its object in common: a field guarded by a
// lock (whatever the other sites do), not owned by a goroutine.
func (s *state) lockedWrites(r *roleInfo, group []site) bool {
	var common map[string]hold
	for _, st := range group {
		if !st.write || s.onlyRole(st.fn) != r {
			continue
		}
		g := s.guards(st)
		if common == nil {
			common = g
			continue
		}
		for name := range common {
			if _, ok := g[name]; !ok {
				delete(common, name)
			}
		}
	}
	return len(common) > 0
}

// onlyRole returns the entry candidate fn runs on when it runs on that
// one root only.
func (s *state) onlyRole(fn *ssa.Function) *roleInfo {
	var r *roleInfo
	for _, rc := range s.ctx.Of(fn) {
		cand := s.roleOf(rc.Root)
		if cand == nil || r != nil && cand != r {
			return nil
		}
		r = cand
	}
	return r
}

func (s *state) roleOf(root *roots.Root) *roleInfo {
	if root == nil || root.Func == nil {
		return nil
	}
	if r := s.roles[root.Func]; r != nil && r.root == root {
		return r
	}
	return nil
}

// rootsText names the roots fn runs on other than r's, for a deviant site.
func (s *state) rootsText(fn *ssa.Function, own *roots.Root) string {
	var names []string
	seen := map[string]bool{}
	for _, rc := range s.ctx.Of(fn) {
		if rc.Root == own {
			continue
		}
		name := "on " + rc.Root.Describe()
		switch {
		case rc.Root.Kind != roots.KindUnknown:
		case rc.Root.Func == fn:
			name = "whose callers are unknown"
		default:
			name = "reached from " + rc.Root.Via + ", whose callers are unknown"
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// findEntries records the package's goroutine loops: functions started
// by a go statement, or exported (their callers start them), whose body
// loops receiving from a channel, and the declared entries.
func (s *state) findEntries() {
	s.roles = map[*ssa.Function]*roleInfo{}
	for _, fn := range s.p.Funcs {
		if fn.Parent() != nil {
			continue
		}
		root := s.ctx.RootOf(fn)
		if root == nil {
			continue
		}
		if it, ok := s.p.FuncDecl(fn).Has(string(directive.Entry)); ok {
			s.roles[fn] = &roleInfo{fn: fn, root: root, role: orControl(it.Role), declared: true}
			continue
		}
		if root.Kind != roots.KindGo && root.Kind != roots.KindUnknown {
			continue
		}
		if recv, ok := s.loopReceive(fn); ok && s.decls[fn.Object()] != nil {
			s.roles[fn] = &roleInfo{fn: fn, root: root, recv: recv}
		}
	}
}

// loopReceive reports whether fn blocks receiving from a channel inside a
// loop, and names the channel. Timers and contexts do not count: every
// long-running loop selects on them; a mailbox is what makes it an owner.
func (s *state) loopReceive(fn *ssa.Function) (string, bool) {
	for _, b := range fn.Blocks {
		if !objects.OnCycle(b) {
			continue
		}
		for _, instr := range b.Instrs {
			var chans []ssa.Value
			switch in := instr.(type) {
			case *ssa.UnOp:
				if in.Op == token.ARROW {
					chans = append(chans, in.X)
				}
			case *ssa.Select:
				if in.Blocking {
					for _, st := range in.States {
						if st.Dir == types.RecvOnly {
							chans = append(chans, st.Chan)
						}
					}
				}
			}
			for _, ch := range chans {
				if !timerOrDone(ch) {
					return s.chanName(ch), true
				}
			}
		}
	}
	return "", false
}

// timerOrDone reports whether ch is a context's Done(), a time package
// channel (time.After, a Ticker's or Timer's C).
func timerOrDone(ch ssa.Value) bool {
	switch v := ch.(type) {
	case *ssa.Call:
		if v.Call.IsInvoke() {
			return v.Call.Method.Name() == "Done"
		}
		if callee := v.Call.StaticCallee(); callee != nil {
			return callee.Name() == "Done" || callee.Pkg != nil && callee.Pkg.Pkg.Path() == "time"
		}
	case *ssa.UnOp:
		if fa, ok := v.X.(*ssa.FieldAddr); ok {
			n := objects.NamedOf(fa.X.Type())
			return n != nil && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time"
		}
	}
	return false
}

func (s *state) chanName(v ssa.Value) string {
	if u, ok := v.(*ssa.UnOp); ok {
		if text, ok := s.texts[u.X.Pos()]; ok {
			return text
		}
	}
	if text, ok := s.texts[v.Pos()]; ok {
		return text // a call's '(' is indexed too
	}
	return "a channel"
}

// nameRoles gives each candidate that owns fields a role: control for
// the one owning most, else a name after its type or function.
func (s *state) nameRoles() {
	used := map[string]bool{}
	for _, r := range s.roles {
		if r.declared {
			used[r.role] = true
		}
	}
	rs := s.sortedRoles()
	sort.SliceStable(rs, func(i, j int) bool { return len(rs[i].owned) > len(rs[j].owned) })
	for _, r := range rs {
		if r.declared || len(r.owned) == 0 {
			continue
		}
		name := directive.DefaultRole
		if used[name] {
			name = roleName(r.fn)
			for i := 2; used[name]; i++ {
				name = fmt.Sprintf("%s%d", roleName(r.fn), i)
			}
		}
		r.role, used[name] = name, true
	}
}

// roleName is a role named after fn's receiver type, or fn.
func roleName(fn *ssa.Function) string {
	name := fn.Name()
	if recv := fn.Signature.Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			name = n.Obj().Name()
		}
	}
	r := []rune(name)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

func (s *state) sortedRoles() []*roleInfo {
	var out []*roleInfo
	for _, r := range s.roles {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].fn.Pos() < out[j].fn.Pos() })
	return out
}

func (s *state) entrySuggestion(r *roleInfo) Suggestion {
	return Suggestion{
		Rule: "suggest-entry", Pos: r.fn.Pos(), Node: s.decls[r.fn.Object()], Directive: withRole("entry", r.role),
		Subject:  s.name(r.fn),
		Evidence: fmt.Sprintf("its loop receives from %s and its goroutine owns %s", r.recv, strings.Join(r.owned, ", ")),
		Score:    zScore(len(r.owned)+1, len(r.owned)+1),
	}
}

// withRole renders a role directive, control being the default.
func withRole(verb, role string) string {
	if role == "" || role == directive.DefaultRole {
		return verb
	}
	return verb + " " + role
}

func orControl(role string) string {
	if role == "" {
		return directive.DefaultRole
	}
	return role
}
