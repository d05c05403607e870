package locks

import (
	"go/token"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// classify says how the address addr (or, at depth 1, the value loaded
// from it) is used: loads read, stores write; a map or slice element
// update through the loaded value writes; an address passed to sync/atomic
// is atomic; any other use of the address counts as a write.
//
// checked says whether a method called on the address checks its own
// accesses (see isCheckedReceiver); nil means none does.
func classify(addr ssa.Value, depth int, checked func(*ssa.Function) bool) access {
	return classifyUses(addr, depth, checked, nil)
}

// classifyUses is classify over the uses of addr that keep accepts (all
// when keep is nil).
func classifyUses(addr ssa.Value, depth int, checked func(*ssa.Function) bool, keep func(ssa.Instruction) bool) access {
	var acc access
	refs := addr.Referrers()
	if refs == nil {
		return access{read: true}
	}
	for _, r := range *refs {
		if keep != nil && !keep(r) {
			continue
		}
		switch x := r.(type) {
		case *ssa.Store:
			if depth == 0 {
				acc.stored = acc.stored || x.Addr == addr
				acc.write = true // stored into, or the address itself stored away
			} else {
				acc.read = true
			}
		case *ssa.UnOp:
			if x.Op == token.MUL && depth == 0 {
				acc.read = true
				if sub := classify(x, 1, checked); sub.write {
					acc.write = true
				}
			} else {
				acc.read = true
			}
		case *ssa.MapUpdate:
			acc.write = acc.write || x.Map == addr
			acc.read = true
		case *ssa.FieldAddr, *ssa.IndexAddr:
			sub := classify(r.(ssa.Value), 0, checked)
			if _, field := r.(*ssa.FieldAddr); field {
				// atomic.LoadPointer(&v.mounts.slots) is an atomic use of
				// slots, not of mounts: whether mounts must be declared
				// atomic is not its business.
				sub.atomicFn = false
			}
			if _, elem := r.(*ssa.IndexAddr); elem && depth == 1 && !sub.stored {
				// &s.buf[i] kept or passed on: the slice field is read (as
				// in checklocks); a store into the element still writes.
				sub.write = false
			}
			acc = acc.merge(sub)
		case ssa.CallInstruction: // a call, also deferred or started as a goroutine
			u := useInCall(x.Common(), addr, depth, checked)
			if depth == 1 && isBuiltin(x.Common(), "delete") && len(x.Common().Args) > 0 && x.Common().Args[0] == addr {
				u.write = true
			}
			acc = acc.merge(u)
		case *ssa.DebugRef:
		default:
			if depth == 0 {
				acc.write = true // the address escapes: assume a write through it
			} else {
				acc.read = true
			}
		}
	}
	return acc
}

// useInCall classifies passing v to a call: an address given to a
// sync/atomic function or an atomic type's method as the word it works on
// (the first argument) is atomic (a write unless it is a Load); an address
// given to any other call, or to an atomic one as the value to store
// (`sink.Store(&t.n)`), may be written through (depth 0); a loaded value
// is only read.
func useInCall(c *ssa.CallCommon, v ssa.Value, depth int, checked func(*ssa.Function) bool) access {
	if callee := c.StaticCallee(); atomicPackage(callee) && len(c.Args) > 0 && c.Args[0] == v {
		name := callee.Name()
		if strings.HasPrefix(name, "Racy") { // gVisor atomicbitops' plain accessors
			return access{read: true, write: name != "RacyLoad"}
		}
		return access{atomic: true, read: true, write: !strings.HasPrefix(name, "Load"), atomicFn: callee.Signature.Recv() == nil}
	}
	if depth == 0 && !checkedReceiver(c, v, checked) {
		return access{read: true, write: true}
	}
	return access{read: true}
}

// checkedReceiver reports whether v is the receiver of a method called by
// c that checks its own accesses (e.igmp.getVersion() on a struct field,
// the method annotated or its type's fields guarded): a read of the field,
// as in checklocks. A method of an unannotated type (c.list.PushBack)
// may write through its receiver unchecked, so that stays a write.
func checkedReceiver(c *ssa.CallCommon, v ssa.Value, checked func(*ssa.Function) bool) bool {
	callee := c.StaticCallee()
	return checked != nil && callee != nil && callee.Signature.Recv() != nil && len(c.Args) > 0 && c.Args[0] == v && checked(callee)
}

func (a access) merge(b access) access {
	return access{read: a.read || b.read, write: a.write || b.write, atomic: a.atomic || b.atomic,
		atomicFn: a.atomicFn || b.atomicFn, stored: a.stored || b.stored}
}

// atomicPackage reports whether fn is a function or method of sync/atomic,
// or of a package named atomicbitops (gVisor's, which checklocks knows).
// Instantiated generic methods (atomic.Pointer[T].Load) have no package
// of their own: their object's package counts.
func atomicPackage(fn *ssa.Function) bool {
	if fn == nil || fn.Object() == nil || fn.Object().Pkg() == nil {
		return false
	}
	pkg := fn.Object().Pkg()
	return pkg.Path() == "sync/atomic" || pkg.Name() == "atomicbitops"
}

func isBuiltin(c *ssa.CallCommon, name string) bool {
	b, ok := c.Value.(*ssa.Builtin)
	return ok && b.Name() == name
}

// checksOwnAccesses reports whether a call of method fn on a guarded
// field reads the field (use.go): fn declares lock requirements or
// effects, or its receiver's struct declares guards on its fields (its
// accesses are checked in it), or fn is of this package and writes
// nothing through its receiver. A method of another package is taken as
// a read, as checklocks does: facts do not say what it writes, and
// read-only calls (`list.Front()`, `tcb.State()` under RLock) are far
// more common than mutating ones.
func (e *engine) checksOwnAccesses(fn *ssa.Function) bool {
	if len(items(e.p.FuncDecl(fn))) > 0 || !e.p.FuncSet[fn] {
		return true
	}
	if !e.writesReceiver(fn, map[*ssa.Function]bool{}) {
		return true
	}
	n := objects.NamedOf(fn.Signature.Recv().Type())
	return n != nil && e.guardsSomeField(n, nil)
}

// writesReceiver reports whether fn, a method of this package, stores
// through its receiver (or calls a method of the same type that does).
func (e *engine) writesReceiver(fn *ssa.Function, seen map[*ssa.Function]bool) bool {
	if fn == nil || seen[fn] || len(fn.Params) == 0 {
		return false
	}
	seen[fn] = true
	recv := objects.NamedOf(fn.Params[0].Type())
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch x := instr.(type) {
			case *ssa.Store:
				if root, _ := rootOf(pathOf(fn, x.Addr)); root == "p0" {
					return true
				}
			case *ssa.MapUpdate:
				if root, _ := rootOf(pathOf(fn, x.Map)); root == "p0" {
					return true
				}
			case ssa.CallInstruction:
				if callee := x.Common().StaticCallee(); methodOf(callee, recv) && e.p.FuncSet[callee] && e.writesReceiver(callee, seen) {
					return true
				}
			}
		}
	}
	return false
}
