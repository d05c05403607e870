//go:build race

package confine

import "runtime"

// The race detector treats every mutex and atomic operation as a
// happens-before edge. confine's own bookkeeping (the Owner word, the
// lock-order graph) must not add such edges between user goroutines, or
// enabling confine under -race would hide the very races -race is there to
// find. Between hideSyncBegin and hideSyncEnd the detector ignores
// synchronisation on this goroutine; the bookkeeping memory is only touched
// by atomics or by //go:norace functions, so it is never reported either.

func hideSyncBegin() { runtime.RaceDisable() }

func hideSyncEnd() { runtime.RaceEnable() }
