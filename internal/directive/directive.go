// Package directive parses and resolves confinelint's annotation language:
// //confined:VERB comments and gVisor checklocks comments. It is the one
// parser shared by every analyzer; it never imports go/analysis so that it
// can be fuzzed and reused on its own.
package directive

import (
	"go/token"
	"go/types"
)

// Verb is one word of the closed directive vocabulary.
type Verb string

// The vocabulary. The comment after each verb names the analyzer that owns
// it (and so reports its misuse).
const (
	Control  Verb = "control"  // confined
	Entry    Verb = "entry"    // confined
	Callback Verb = "callback" // confined
	Spawns   Verb = "spawns"   // confined
	Any      Verb = "any"      // confined
	// Serialized marks a function that runs on a foreign goroutine but
	// never concurrently with ROLE: checked as ROLE's code.
	Serialized Verb = "serialized" // confined
	// Async declares another package's asynchronous API at file level.
	Async  Verb = "async"  // confined
	Ignore Verb = "ignore" // confined (suppression; applies to every analyzer)

	GuardedBy      Verb = "guardedby"       // lockorder
	Requires       Verb = "requires"        // lockorder
	RequiresShared Verb = "requires_shared" // lockorder
	Acquires       Verb = "acquires"        // lockorder
	AcquiresShared Verb = "acquires_shared" // lockorder
	Releases       Verb = "releases"        // lockorder
	ReleasesShared Verb = "releases_shared" // lockorder
	Excludes       Verb = "excludes"        // lockorder
	ExcludesWrite  Verb = "excludes_write"  // lockorder
	Alias          Verb = "alias"           // lockorder
	Before         Verb = "before"          // lockorder
	Atomic         Verb = "atomic"          // lockorder
	Force          Verb = "force"           // lockorder; only spelled +checklocksforce
	// ReadAny relaxes a field's several guards for reads: a read needs
	// any one of them held, a write still needs all.
	ReadAny Verb = "readany" // lockorder; only spelled +checklocksreadany

	Drain  Verb = "drain"  // revokepath
	Commit Verb = "commit" // revokepath
)

// Analyzer names, as users see them in output and flags.
const (
	Confined   = "confined"
	LockOrder  = "lockorder"
	RevokePath = "revokepath"
)

// DefaultRole is the role of //confined:control and friends without an argument.
const DefaultRole = "control"

// Directive is one parsed directive comment.
type Directive struct {
	Verb Verb
	Args []Arg
	// Pos and End span the whole comment.
	Pos, End token.Pos
	// Spelling is the directive word as written: "//confined:guardedby",
	// "+checklocks", ... Messages quote it so users recognise their text.
	Spelling string
	// Reason is the free text of an ignore directive.
	Reason string
	// Lock is the resolved lock for lock verbs (nil until resolved, and
	// for verbs that take no lock). Alias has Lock and AliasOf.
	Lock, AliasOf *LockPath
	// Role is the resolved role for ownership and revokepath verbs that
	// take one (DefaultRole when omitted).
	Role string
	// Param is the index of the named parameter for spawns (receiver
	// excluded: 0 is the first parameter).
	Param int
	// Line is set only for statement-level directives (the entries of
	// Set.Forces): the source line they apply to, as token.FileSet.Position
	// reports it, in the file of Pos.
	Line int
}

// Arg is one argument with its position, for precise diagnostics.
type Arg struct {
	Text string
	Pos  token.Pos
}

// PathRoot says where a lock path starts.
type PathRoot uint8

const (
	RootField    PathRoot = iota // a field of the struct the directive sits in (field directives)
	RootReceiver                 // the method's receiver
	RootParam                    // a parameter of the function (Param is its index)
	RootGlobal                   // a package-level variable (Global)
	RootResult                   // a named result of the function (Param is its index); acquires only
)

// LockPath names a lock symbolically: a root and a chain of field
// selections. Class is the lock class (lockdep style): the declaring field or
// package var of the final lock.
type LockPath struct {
	Root   PathRoot
	Param  int
	Global *types.Var
	// Fields are the selections from the root, embedded fields included:
	// a promoted "mu" reached through an embedded "inner" is [inner, mu], as
	// the SSA form selects it.
	Fields []*types.Var
	// Class is the declaring (generic origin) field or package var of the
	// lock. It is nil when the lock is the receiver, a parameter or a result
	// itself: its class then depends on the caller.
	Class *types.Var
	// Text is the path as the user wrote it ("mu", "c.state.mu", "pkg.mu").
	Text string
	// ReadWrite is set when the lock also has a shared mode (RLock and
	// RUnlock, like sync.RWMutex).
	ReadWrite bool
}

// Problem is a malformed or misplaced directive. It is reported by the
// analyzer named in Analyzer, at Pos.
type Problem struct {
	Pos, End token.Pos
	Analyzer string
	// Category is a stable id for docs and SARIF, e.g. "directive-unknown".
	Category string
	Message  string
	// Decl is the declaration the comment documents (NoPos when none),
	// given as related information: checklocks reports there.
	Decl     token.Pos
	DeclName string
	// Fix, when set, is the correction a did-you-mean suggests.
	Fix *Edit
}

// Edit replaces the source in [Pos, End) with Text.
type Edit struct {
	Pos, End token.Pos
	Text     string
}

// IgnoreComment is a //confined:ignore (or +checklocksignore) that applies
// to the statement or declaration on Line (same file as Pos).
type IgnoreComment struct {
	Pos    token.Pos
	Line   int    // the source line whose findings it silences
	File   string // filename of that line
	Reason string
	// Spelling is the comment's word as written ("//confined:ignore",
	// "+checklocksignore"), for messages.
	Spelling string
	// Analyzers it applies to; nil means all three. +checklocksignore
	// applies to lockorder only.
	Analyzers []string
	// DeclPos..DeclEnd is set when the ignore sits on a declaration: it
	// silences findings anywhere inside that declaration.
	DeclPos, DeclEnd token.Pos
	// Property: a +checklocksignore is never reported as unused, as in
	// checklocks: on a declaration it is "do not check this function"
	// (gVisor puts it on every generated mutex method and state
	// function), and on a statement it was placed where checklocks
	// reports, which is not always where confinelint does.
	Property bool
}

// Set is every directive of one package, attached to the objects they apply
// to, plus the ignores and the problems found.
//
// Only valid directives are recorded: a directive with a problem (misplaced,
// unresolved, conflicting with an earlier one) is dropped and its problem is
// in Problems, so lock verbs in Objects always have Lock set.
type Set struct {
	// Objects maps a declared object (*types.Func, a field or package
	// *types.Var, *types.TypeName) to its directives in source order.
	Objects  map[types.Object][]Directive
	Ignores  []*IgnoreComment
	Problems []Problem
	// Forces are the statement-level +checklocksforce comments, each with
	// the Line it forces. (+checklocksforce on a func is in Objects.)
	Forces []Directive
	// Roles are the roles declared by the package's //confined:entry
	// functions, sorted: what importers' importedRoles should answer for.
	Roles []string
	// Async are the package's resolved //confined:async declarations, in
	// source order.
	Async []AsyncDecl
}

// AsyncDecl is one resolved //confined:async declaration: argument Arg
// (receiver not counted) of Func runs on another goroutine.
type AsyncDecl struct {
	Func *types.Func
	Arg  int
	Pos  token.Pos
}

// Of returns the directives on obj (nil if none).
func (s *Set) Of(obj types.Object) []Directive {
	if s == nil {
		return nil
	}
	return s.Objects[obj]
}

// Find returns the first directive with verb v on obj.
func (s *Set) Find(obj types.Object, v Verb) (Directive, bool) {
	for _, d := range s.Of(obj) {
		if d.Verb == v {
			return d, true
		}
	}
	return Directive{}, false
}
