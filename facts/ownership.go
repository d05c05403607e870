package facts

import "strings"

// Ownership summarises, for an exported function, the role-confined state its
// body reaches (directly or through calls), with the call chain that proves
// each access. Callers in other packages use it to report an access from the
// wrong goroutine with the full chain.
type Ownership struct {
	Accesses []Access // sorted by State, then Role
	// Implied is the role a runtime owner.Assert() in an otherwise
	// undeclared function confines it to: callers treat it as declared
	// //confined:control Implied.
	Implied string
}

// Access is one reach of confined state.
type Access struct {
	State string   // the state as users name it: "Consumer.inflight", "pkg.offsets"
	Role  string   // the role that owns it
	Write bool     // whether any reach writes
	Call  bool     // State is a function confined to Role, called
	Chain []string // function names from the summarised function to the access, package-qualified
}

func (*Ownership) AFact() {}

func (o *Ownership) String() string {
	var parts []string
	if o.Implied != "" {
		parts = append(parts, "asserts "+o.Implied)
	}
	for _, a := range o.Accesses {
		kind := "reads"
		switch {
		case a.Call:
			kind = "calls"
		case a.Write:
			kind = "writes"
		}
		parts = append(parts, kind+" "+a.State+"@"+a.Role+" via "+strings.Join(a.Chain, " -> "))
	}
	return "owns(" + strings.Join(parts, "; ") + ")"
}
