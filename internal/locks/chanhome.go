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
// or package var it is stored into, when there is exactly one, and a
// field to the twin it is one channel with (twinChanFields).
func (e *engine) homeOf(key string) string {
	if !strings.HasPrefix(key, "make:") && !strings.HasPrefix(key, "var:") && !strings.HasPrefix(key, "field:") {
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
// into fields and package vars; a local stored into two places has none,
// unless the two are twin fields.
func (e *engine) findChanHomes() map[string]string {
	homesOf := map[string][]string{} // local -> the places it is stored into
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
				if !slices.Contains(homesOf[local], home) {
					homesOf[local] = append(homesOf[local], home)
				}
			}
		}
	}
	homes := twinChanFields(homesOf)
	for local, places := range homesOf {
		home := homes[places[0]]
		if home == "" {
			home = places[0]
		}
		for _, p := range places[1:] {
			if q := homes[p]; q != home && p != home {
				home = "" // two homes: keep the local identity
				break
			}
		}
		homes[local] = home
	}
	return homes
}

// twinChanFields finds the fields that hold one channel under two names:
// a receive-only and a send-only view of it (go-ethereum's TypeMux
// subscription keeps `readC <-chan T` and `postC chan<- T`, both the one
// channel made for it). Two fields are twins when every channel stored
// into either is stored into both; the result maps the second by name
// to the first.
func twinChanFields(homesOf map[string][]string) map[string]string {
	localsOf := map[string][]string{} // field -> the locals stored into it
	for local, places := range homesOf {
		for _, p := range places {
			if strings.HasPrefix(p, "field:") {
				localsOf[p] = append(localsOf[p], local)
			}
		}
	}
	twins := map[string]string{}
	for _, places := range homesOf {
		if len(places) != 2 || !strings.HasPrefix(places[0], "field:") || !strings.HasPrefix(places[1], "field:") {
			continue
		}
		a, b := places[0], places[1]
		if !allStoredInto(localsOf[a], homesOf, a, b) || !allStoredInto(localsOf[b], homesOf, a, b) {
			continue
		}
		twins[max(a, b)] = min(a, b)
	}
	return twins
}

// allStoredInto reports whether each local is stored into exactly the
// two fields a and b.
func allStoredInto(locals []string, homesOf map[string][]string, a, b string) bool {
	for _, l := range locals {
		if places := homesOf[l]; len(places) != 2 || !slices.Contains(places, a) || !slices.Contains(places, b) {
			return false
		}
	}
	return true
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
