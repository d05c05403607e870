package facts

import (
	"strconv"
	"strings"
)

// AsyncAPIs is a package fact: the asynchronous APIs the package declares
// with //confined:async, so that every package importing it (directly or
// not) treats their function arguments as goroutine roots, as the
// -confined.async flag does, whichever driver runs.
type AsyncAPIs struct {
	APIs []AsyncAPI // sorted by Func, then Arg
}

// AsyncAPI is one declared API: argument Arg (receiver not counted) of the
// function whose types.Func.FullName is Func runs on another goroutine.
type AsyncAPI struct {
	Func string
	Arg  int
}

func (*AsyncAPIs) AFact() {}

func (a *AsyncAPIs) String() string {
	parts := make([]string, len(a.APIs))
	for i, api := range a.APIs {
		parts[i] = api.Func + " arg" + strconv.Itoa(api.Arg)
	}
	return "async(" + strings.Join(parts, ", ") + ")"
}
