//go:build confine || race

#include "textflag.h"

// func getg() unsafe.Pointer
//
// ABI0 assembly cannot rely on R14 holding g (that is ABIInternal only), so
// read it from thread-local storage, which the assembler rewrites for the
// target OS and build mode.
TEXT ·getg(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
