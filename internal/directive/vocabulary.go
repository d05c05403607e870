package directive

import "strings"

// Problem categories: stable ids for docs and SARIF rules.
const (
	CategoryUnknown      = "directive-unknown"       // a verb or checklocks word not in the vocabulary
	CategoryMalformed    = "directive-malformed"     // a near miss of the //confined: form itself
	CategoryArgs         = "directive-args"          // wrong number or shape of arguments
	CategoryIgnoreReason = "directive-ignore-reason" // //confined:ignore without a reason
	CategoryPlacement    = "directive-placement"     // a verb where it means nothing
	CategoryConflict     = "directive-conflict"      // contradicting or duplicate directives on one object
	CategoryLock         = "directive-lock"          // a lock path that resolves to no lock
	CategoryParam        = "directive-param"         // a spawns PARAM that is no function-typed parameter
	CategoryRole         = "directive-role"          // a role no //confined:entry declares
	CategoryAsync        = "directive-async"         // an async declaration that names no function or argument
)

// argShape is the argument grammar of a verb.
type argShape uint8

const (
	argsNone           argShape = iota // no arguments
	argsOptionalRole                   // [ROLE]
	argsRole                           // ROLE, required
	argsAsync                          // PKG.FUNC argN
	argsParam                          // PARAM
	argsLockPath                       // MU: dotted identifiers
	argsAliasPair                      // A=B, two lock paths
	argsReason                         // REASON: free text, required
	argsOptionalReason                 // free text, optional (checklocks ignore and force)
)

// placement is a set of positions a directive may occupy.
type placement uint8

const (
	onFunc       placement = 1 << iota // doc comment of a func or method declaration
	onField                            // doc or trailing comment of a struct field
	onStructType                       // doc comment of a struct type declaration
	onPackageVar                       // doc comment of a package-level var declaration
	onStatement                        // the line above a statement, or trailing it
	onDecl                             // doc comment of any declaration (suppression)
	onFile                             // a file-level comment: the package clause's doc or a group of its own
)

var placementNames = []struct {
	bit  placement
	name string
}{
	{onFunc, "a func declaration"},
	{onField, "a struct field"},
	{onStructType, "a struct type"},
	{onPackageVar, "a package-level var"},
	{onStatement, "a statement (on the line above it or trailing it)"},
	{onDecl, "a declaration"},
	{onFile, "a file-level comment (the package clause's doc, or a comment group of its own outside any declaration)"},
}

// String lists the positions in words, for "it belongs on ..." messages.
func (p placement) String() string {
	var names []string
	for _, pn := range placementNames {
		if p&pn.bit != 0 {
			names = append(names, pn.name)
		}
	}
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// verbSpec is one row of the closed vocabulary: who owns the verb, what it
// takes and where it may be written.
type verbSpec struct {
	verb   Verb
	owner  string
	args   argShape
	places placement
	// checklocksOnly verbs have no //confined: spelling.
	checklocksOnly bool
}

// vocabulary is the single table every check consults. Its order is the
// order of the annotation contract, and breaks did-you-mean ties.
var vocabulary = []verbSpec{
	{verb: Control, owner: Confined, args: argsOptionalRole, places: onFunc | onField | onStructType | onPackageVar},
	{verb: Entry, owner: Confined, args: argsOptionalRole, places: onFunc},
	{verb: Callback, owner: Confined, args: argsNone, places: onFunc},
	{verb: Spawns, owner: Confined, args: argsParam, places: onFunc},
	{verb: Any, owner: Confined, args: argsNone, places: onFunc},
	{verb: Serialized, owner: Confined, args: argsRole, places: onFunc},
	{verb: Async, owner: Confined, args: argsAsync, places: onFile},
	{verb: GuardedBy, owner: LockOrder, args: argsLockPath, places: onField | onPackageVar},
	{verb: Requires, owner: LockOrder, args: argsLockPath, places: onFunc},
	{verb: RequiresShared, owner: LockOrder, args: argsLockPath, places: onFunc},
	{verb: Acquires, owner: LockOrder, args: argsLockPath, places: onFunc},
	{verb: AcquiresShared, owner: LockOrder, args: argsLockPath, places: onFunc},
	{verb: Releases, owner: LockOrder, args: argsLockPath, places: onFunc},
	{verb: ReleasesShared, owner: LockOrder, args: argsLockPath, places: onFunc},
	{verb: Excludes, owner: LockOrder, args: argsLockPath, places: onFunc},
	{verb: ExcludesWrite, owner: LockOrder, args: argsLockPath, places: onFunc},
	{verb: Alias, owner: LockOrder, args: argsAliasPair, places: onStructType},
	{verb: Before, owner: LockOrder, args: argsLockPath, places: onField | onPackageVar},
	{verb: Atomic, owner: LockOrder, args: argsNone, places: onField | onPackageVar},
	{verb: Force, owner: LockOrder, args: argsOptionalReason, places: onFunc | onStatement, checklocksOnly: true},
	{verb: ReadAny, owner: LockOrder, args: argsNone, places: onField, checklocksOnly: true},
	{verb: Drain, owner: RevokePath, args: argsOptionalRole, places: onFunc},
	{verb: Commit, owner: RevokePath, args: argsOptionalRole, places: onFunc},
	{verb: Ignore, owner: Confined, args: argsReason, places: onStatement | onDecl},
}

// specOf returns the vocabulary row of v.
func specOf(v Verb) (verbSpec, bool) {
	for _, s := range vocabulary {
		if s.verb == v {
			return s, true
		}
	}
	return verbSpec{}, false
}

// confinedVerb returns the row of a verb spelled //confined:NAME.
func confinedVerb(name string) (verbSpec, bool) {
	s, ok := specOf(Verb(name))
	if !ok || s.checklocksOnly {
		return verbSpec{}, false
	}
	return s, true
}

// confinedVerbNames are the //confined: verbs, in table order.
func confinedVerbNames() []string {
	var names []string
	for _, s := range vocabulary {
		if !s.checklocksOnly {
			names = append(names, string(s.verb))
		}
	}
	return names
}

// Known reports whether v is in the vocabulary.
func (v Verb) Known() bool {
	_, ok := specOf(v)
	return ok
}

// Analyzer returns the name of the analyzer that owns v and reports its
// misuse ("" for an unknown verb).
func (v Verb) Analyzer() string {
	s, _ := specOf(v)
	return s.owner
}

// owner is the analyzer that reports problems with d: the verb's owner,
// except that every checklocks spelling belongs to lockorder (a codebase
// migrating from checklocks looks there for them).
func (d *Directive) owner() string {
	if strings.HasPrefix(d.Spelling, "+") {
		return LockOrder
	}
	if o := d.Verb.Analyzer(); o != "" {
		return o
	}
	return Confined
}
