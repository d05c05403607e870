package checks

// directiveChecks are the problems of the directive parser
// (internal/directive): each is reported by the analyzer owning the verb
// (ownership and unknown verbs: confined; lock verbs: lockorder;
// drain/commit: revokepath).
var directiveChecks = []Check{
	{
		Category: "directive-unknown", Analyzer: "directive", Level: Error,
		Title: "Unknown directive verb or checklocks word",
		Text:  "A //confined: verb, or a +checklocks word, that is not in the vocabulary. Unlike gVisor checklocks, a misspelling is never silently ignored; the message suggests the nearest verb.",
		Fix:   "Correct the spelling to a verb of docs/annotations (control, entry, callback, spawns, any, guardedby, requires, acquires, releases, excludes, alias, before, atomic, drain, commit, ignore).",
	},
	{
		Category: "directive-malformed", Analyzer: "directive", Level: Error,
		Title: "Malformed directive form",
		Text:  "A comment meant as a directive that Go does not treat as one: a space after //, a missing or misspelled tool prefix, an empty or capitalised verb, or a block comment. go/doc would show it and confinelint would not read it.",
		Fix:   "Write the directive as //confined:VERB [ARGS]: no space after //, a lower-case verb, a line comment.",
	},
	{
		Category: "directive-args", Analyzer: "directive", Level: Error,
		Title: "Wrong number or shape of directive arguments",
		Text:  "The verb takes a different number of arguments, or an argument is not of the expected shape (a role identifier, a lock path of dotted identifiers, an A=B alias pair, a parameter name, PKG.FUNC argN). Words after the arguments are arguments: an explanation goes after a second //, where it is an ordinary comment.",
		Fix:   "Give the verb exactly the arguments its table row in the annotation contract lists, and put any explanation after \" // \".",
	},
	{
		Category: "directive-ignore-reason", Analyzer: "directive", Level: Error,
		Title: "//confined:ignore without a reason",
		Text:  "Every //confined:ignore must say why the finding is safe to silence, so the next reader can re-check it. (+checklocksignore is exempt for compatibility.)",
		Fix:   "Add the reason after the verb.",
	},
	{
		Category: "directive-placement", Analyzer: "directive", Level: Error,
		Title: "Directive where it means nothing",
		Text:  "A directive on a kind of declaration it does not apply to (a lock verb on a type, an ownership verb on a local variable, guardedby on a func) is reported instead of being a silent no-op.",
		Fix:   "Move the directive to the declaration it describes, or use the verb meant for this kind of declaration.",
	},
	{
		Category: "directive-conflict", Analyzer: "directive", Level: Error,
		Title: "Contradicting or duplicate directives",
		Text:  "Two directives on one object that contradict each other (control poll and control ui; entry and callback; acquires and releases of the same lock) or repeat each other. The later one is dropped.",
		Fix:   "Keep the one directive that states the truth; delete the other.",
	},
	{
		Category: "directive-lock", Analyzer: "directive", Level: Error,
		Title: "Lock path that resolves to no lock",
		Text:  "The lock named by guardedby, requires, acquires, releases, excludes, alias or before is no field, parameter path or package variable of a lock type (sync.Mutex, sync.RWMutex or anything with Lock/Unlock).",
		Fix:   "Name an existing lock: a field of the same struct (mu), a path from the receiver or a parameter (c.state.mu), or a package variable (pkg.mu).",
	},
	{
		Category: "directive-param", Analyzer: "directive", Level: Error,
		Title: "spawns names no function-typed parameter",
		Text:  "//confined:spawns PARAM must name a parameter of function type of the annotated function: it is the value the function calls on another goroutine.",
		Fix:   "Name the function-typed parameter that runs on another goroutine.",
	},
	{
		Category: "directive-async", Analyzer: "directive", Level: Error,
		Title: "async names no function with a function argument",
		Text:  "A file-level //confined:async PKG.FUNC argN must name a function or method of this package or of a package it imports, and N must be one of its function-typed arguments (arg0 is the first; the receiver does not count). The message names the closest match.",
		Fix:   "Correct the name or the argument index; the -confined.async flag takes the same names (with :argN).",
	},
	{
		Category: "directive-role", Analyzer: "directive", Level: Error,
		Title: "Role that no entry declares",
		Text:  "A role other than control must be declared by a //confined:entry ROLE function in the package or one of its dependencies; an undeclared role is usually a typo and would make every access look foreign.",
		Fix:   "Fix the role's spelling, or declare the goroutine that owns it with //confined:entry ROLE.",
	},
}
