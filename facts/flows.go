package facts

import (
	"strconv"
	"strings"
)

// ParamFlows is what an exported function does with its parameters
// (receiver first), so that passing a fresh object to another package's
// function publishes it only when that function lets it escape:
// FlowStays, FlowEscapes, or the index of the one other parameter whose
// memory alone keeps it (`so.handler = h`). Exported only when some
// parameter does not escape; a missing fact means every one escapes.
type ParamFlows struct {
	Flows []int
}

// Values of ParamFlows.Flows besides a parameter index.
const (
	FlowEscapes = -2
	FlowStays   = -1
)

func (*ParamFlows) AFact() {}

func (f *ParamFlows) String() string {
	parts := make([]string, len(f.Flows))
	for i, fl := range f.Flows {
		switch {
		case fl == FlowStays:
			parts[i] = "stays"
		case fl >= 0:
			parts[i] = "into " + strconv.Itoa(fl)
		default:
			parts[i] = "escapes"
		}
	}
	return "flows(" + strings.Join(parts, ", ") + ")"
}
