package facts

import (
	"fmt"
	"strings"
)

// Decl is the set of directives declared on an object (function, method,
// field, package var or struct type), so that other packages read the
// declarations of this one without its source.
type Decl struct {
	Items []DeclItem // sorted by Verb, then Role, then Lock
}

// DeclItem is one resolved directive.
type DeclItem struct {
	Verb string // directive verb, e.g. "control", "requires"
	Role string // for role verbs
	// Lock is the lock argument relative to the declaration: "recv.mu",
	// "param1.mu" (parameter index), "field.mu" (same struct), or
	// "global" for a package var, "g:KEY.f.mu" for a field path from
	// a package var (KEY its lockop.ClassKey); LockClass identifies the lock class
	// (see lockop.ClassKey) and LockText is the path as written.
	Lock, LockClass, LockText string
	Param                     int // spawns: parameter index
}

func (*Decl) AFact() {}

func (d *Decl) String() string {
	var parts []string
	for _, it := range d.Items {
		s := it.Verb
		switch {
		case it.Role != "":
			s += " " + it.Role
		case it.LockText != "":
			s += " " + it.LockText
		case it.Verb == "spawns":
			s += fmt.Sprintf(" #%d", it.Param)
		}
		parts = append(parts, s)
	}
	return "decl(" + strings.Join(parts, ", ") + ")"
}

// Has reports whether d declares verb.
func (d *Decl) Has(verb string) (DeclItem, bool) {
	if d == nil {
		return DeclItem{}, false
	}
	for _, it := range d.Items {
		if it.Verb == verb {
			return it, true
		}
	}
	return DeclItem{}, false
}

// Roles is a package fact: the roles declared by //confined:entry in the
// package, so that directives in importers can name them.
type Roles struct {
	Names []string // sorted, unique
}

func (*Roles) AFact() {}

func (r *Roles) String() string { return "roles(" + strings.Join(r.Names, ", ") + ")" }
