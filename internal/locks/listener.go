package locks

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// A net.Listener's Accept waits for a connection or for the listener's
// Close: a server stopping while no client connects unblocks it only
// through Close. Accept is a receive on the listener (identified as a
// channel is, by the field or variable holding it) and Close the send
// that ends it, so a lock held across Accept that the closing goroutine
// takes first is the blocking rule's finding (thrift's TServerSocket
// accepting under its read lock while Interrupt write-locks to close).
// Connections' reads are left out: the peer, not a goroutine of the
// program, usually ends them.

// listenerMethod is "Accept" or "Close" for a call of that method of a
// net.Listener (the interface, or a listener type of package net), ""
// for any other call.
func listenerMethod(c *ssa.CallCommon) string {
	var name string
	var recv types.Type
	switch {
	case c.IsInvoke():
		name, recv = c.Method.Name(), c.Value.Type()
	case c.StaticCallee() != nil && c.StaticCallee().Signature.Recv() != nil && len(c.Args) > 0:
		name, recv = c.StaticCallee().Name(), c.Args[0].Type()
	default:
		return ""
	}
	if name != "Accept" && name != "Close" || !netListener(recv) {
		return ""
	}
	return name
}

// listenerValue is the listener a listenerMethod call is made on.
func listenerValue(c *ssa.CallCommon) ssa.Value {
	if c.IsInvoke() {
		return c.Value
	}
	return c.Args[0]
}

// netListener reports whether t is net.Listener or a pointer to one of
// package net's listener types.
func netListener(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "net" {
		return false
	}
	switch n.Obj().Name() {
	case "Listener", "TCPListener", "UnixListener":
		return true
	}
	return false
}
