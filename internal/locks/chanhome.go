package locks

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A channel, WaitGroup or Cond made in a function and stored into a field
// or package var (`wg := new(sync.WaitGroup); e.wg = wg; go func() {
// defer wg.Done() ... }()`) is the one the code reading that field uses:
// the goroutine calling Done on the local unblocks `e.wg.Wait()`. Its
// identity is the field's when every such store puts it in one place.

// homeOf maps a local identity ("make:", "var:" of a local) to the field
// or package var it is stored into, when there is exactly one.
func (e *engine) homeOf(key string) string {
	if !strings.HasPrefix(key, "make:") && !strings.HasPrefix(key, "var:") {
		return key
	}
	if e.chanHomes == nil {
		e.chanHomes = e.findChanHomes()
	}
	if home := e.chanHomes[key]; home != "" {
		return home
	}
	return key
}

// findChanHomes scans the package's stores of synchronisation handles
// into fields and package vars; a local stored into two places has none.
func (e *engine) findChanHomes() map[string]string {
	homes := map[string]string{}
	for _, fn := range e.p.Funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				st, ok := instr.(*ssa.Store)
				if !ok || !syncHandle(st.Val.Type()) {
					continue
				}
				switch st.Addr.(type) {
				case *ssa.FieldAddr, *ssa.Global:
				default:
					continue
				}
				local, home := e.chanIdentity(fn, st.Val, 0), e.chanIdentity(fn, st.Addr, 0)
				if local == "" || home == "" || local == home || strings.HasPrefix(local, "field:") {
					continue
				}
				if old, seen := homes[local]; seen && old != home {
					home = "" // two homes: keep the local identity
				}
				homes[local] = home
			}
		}
	}
	return homes
}

// syncHandle reports whether t is a channel or a pointer to a
// sync.WaitGroup or sync.Cond.
func syncHandle(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Chan:
		return true
	case *types.Pointer:
		n, ok := types.Unalias(u.Elem()).(*types.Named)
		if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "sync" {
			return false
		}
		return n.Obj().Name() == "WaitGroup" || n.Obj().Name() == "Cond"
	}
	return false
}

// paramChanKey is the channel a parameter is when every call of its
// function in the package passes the same one (`go monitor(c, stop)`); a
// function others can call (exported, outside package main) is not
// followed, nor a closure's parameter.
func (e *engine) paramChanKey(fn *ssa.Function, p *ssa.Parameter, depth int) string {
	if fn.Parent() != nil || fn.Object() == nil || fn.Object().Exported() && fn.Pkg.Pkg.Name() != "main" {
		return ""
	}
	i := slices.Index(fn.Params, p)
	key := ""
	for _, c := range e.objs.CallsOf(fn) {
		args := c.Common().Args
		if i < 0 || i >= len(args) {
			return ""
		}
		k := e.chanIdentity(c.Parent(), args[i], depth)
		if k == "" || key != "" && k != key {
			return ""
		}
		key = k
	}
	return key
}
