//go:build confine || race

package confine

import "runtime"

// report hands v to the hook, or panics with it when there is none.
func report(v Violation) {
	if hook := violationHook.Load(); hook != nil {
		(*hook)(v)
		return
	}
	panic(v)
}

// callerPC returns a return address into the function skip frames above
// report's caller (skip 0 is the function calling callerPC). It writes into
// a stack array, so it does not allocate.
func callerPC(skip int) uintptr {
	var pc [1]uintptr
	if runtime.Callers(skip+2, pc[:]) == 0 {
		return 0
	}
	return pc[0]
}
