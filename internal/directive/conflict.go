package directive

import (
	"fmt"
	"go/types"
	"strings"
)

// attach adds d to t's object unless it repeats or contradicts a directive
// already there; then it reports the later one and keeps the first.
func (c *collector) attach(t target, d Directive) {
	_, onFunc := t.obj.(*types.Func)
	for _, prev := range c.set.Objects[t.obj] {
		if why := conflictBetween(prev, d, c.line(prev), onFunc); why != "" {
			c.report(d.owner(), CategoryConflict, d.Pos, d.End, "%s", why)
			return
		}
	}
	// A struct type's role covers all its fields; a field cannot claim
	// another.
	if d.Verb == Control && t.enclosing != nil {
		if prev, ok := c.set.Find(t.enclosing, Control); ok && prev.Role != d.Role {
			c.report(d.owner(), CategoryConflict, d.Pos, d.End,
				"%s contradicts %s on its struct type %s on line %d: the struct's role covers all its fields",
				describe(d), describe(prev), t.enclosing.Name(), c.line(prev))
			return
		}
	}
	c.set.Objects[t.obj] = append(c.set.Objects[t.obj], d)
}

func (c *collector) line(d Directive) int {
	if c.fset == nil {
		return 0
	}
	return c.fset.Position(d.Pos).Line
}

// conflictBetween says why b cannot join a (written on line aLine) on one
// object, or "".
func conflictBetween(a, b Directive, aLine int, onFunc bool) string {
	if sameDirective(a, b) {
		return fmt.Sprintf("%s repeats %s on line %d", describe(b), describe(a), aLine)
	}
	contradicts := func(reason string) string {
		return fmt.Sprintf("%s contradicts %s on line %d: %s", describe(b), describe(a), aLine, reason)
	}
	switch {
	case isOwnership(a.Verb) && isOwnership(b.Verb) && onFunc:
		return contradicts("a function is confined to one role (control, entry), runs on a foreign goroutine (callback), serialized with a role (serialized) or is safe anywhere (any)")
	case a.Verb == Control && b.Verb == Control:
		return contradicts("state has one owning role")
	case isRevoke(a.Verb) && isRevoke(b.Verb) && a.Role != b.Role:
		return contradicts("drains and commits of one function serve one role")
	case isRevoke(a.Verb) && runsOnRole(b.Verb) && a.Role != b.Role,
		isRevoke(b.Verb) && runsOnRole(a.Verb) && a.Role != b.Role:
		return contradicts("a drain or commit runs on its role's goroutine")
	case a.Verb == Drain && (b.Verb == Callback || b.Verb == Any),
		b.Verb == Drain && (a.Verb == Callback || a.Verb == Any):
		return contradicts("a drain runs on its role's goroutine")
	case isFuncLockVerb(a.Verb) && isFuncLockVerb(b.Verb) && samePath(a.Lock, b.Lock) && !compatibleLockVerbs(a.Verb, b.Verb):
		return contradicts(fmt.Sprintf("they state incompatible lock states for %s", b.Lock.Text))
	}
	return ""
}

// sameDirective reports whether b says exactly what a says, whatever the
// spelling ("+checklocks:mu" and "//confined:guardedby mu" are the same).
func sameDirective(a, b Directive) bool {
	if a.Verb != b.Verb {
		return false
	}
	spec, _ := specOf(a.Verb)
	switch spec.args {
	case argsOptionalRole:
		return a.Role == b.Role
	case argsParam:
		return a.Param == b.Param
	case argsLockPath:
		return samePath(a.Lock, b.Lock)
	case argsAliasPair:
		return samePath(a.Lock, b.Lock) && samePath(a.AliasOf, b.AliasOf) ||
			samePath(a.Lock, b.AliasOf) && samePath(a.AliasOf, b.Lock)
	}
	return true
}

func isOwnership(v Verb) bool {
	return v == Control || v == Entry || v == Callback || v == Any || v == Serialized
}

// runsOnRole reports whether v makes a function run as its role.
func runsOnRole(v Verb) bool { return v == Control || v == Entry || v == Serialized }

func isRevoke(v Verb) bool { return v == Drain || v == Commit }

func isFuncLockVerb(v Verb) bool {
	switch v {
	case Requires, RequiresShared, Acquires, AcquiresShared, Releases, ReleasesShared, Excludes, ExcludesWrite:
		return true
	}
	return false
}

// compatibleLockVerbs lists the pairs of lock states a function may declare
// for one lock: releasing what the caller holds, acquiring what the caller
// must not hold, and holding shared what the caller must not hold
// exclusively. Any other pair contradicts itself (requires with excludes),
// deadlocks (acquires what is already required) or is ambiguous (requires
// with requires_shared).
func compatibleLockVerbs(a, b Verb) bool {
	pairs := [][2]Verb{
		{Releases, Requires},
		{ReleasesShared, RequiresShared},
		{Acquires, Excludes},
		{AcquiresShared, Excludes},
		{RequiresShared, ExcludesWrite},
	}
	for _, p := range pairs {
		if p == [2]Verb{a, b} || p == [2]Verb{b, a} {
			return true
		}
	}
	return false
}

// describe renders d as written, for messages: "//confined:control poll",
// "+checklocks:mu".
func describe(d Directive) string {
	var args []string
	for _, a := range d.Args {
		args = append(args, a.Text)
	}
	sep, join := " ", " "
	if strings.HasPrefix(d.Spelling, "+") {
		sep = ":"
	}
	if d.Verb == Alias {
		join = "="
	}
	if len(args) == 0 {
		return d.Spelling
	}
	return d.Spelling + sep + strings.Join(args, join)
}
