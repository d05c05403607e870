package checks

// suggestChecks are the suggest analyzer's categories: proposals, not
// findings (level note), reported only under -suggest.
var suggestChecks = []Check{
	{
		Category: "suggest-guardedby", Analyzer: "suggest", Level: Note,
		Title: "Field accessed with one lock held nearly everywhere",
		Text:  "A field or package var accessed with the same lock held at nearly every site (at least two sites, three quarters of them, a write among them; locks an unexported function's every caller holds count), which //confined:guardedby would make checked. The sites without the lock are listed: they are the likely races lockorder reports once the annotation is in. Ranked by a z score of the agreeing sites.",
		Fix:   "Read the deviant sites; apply the fix (confinelint -suggest -fix) and take the lock at each of them.",
	},
	{
		Category: "suggest-control", Analyzer: "suggest", Level: Note,
		Title: "Field owned by one goroutine's loop and touched elsewhere",
		Text:  "A field of the loop's own struct type, more than half of whose writes run on one goroutine loop's goroutine only (see suggest-entry) and not under a lock, and that code on other roots (exported functions, callbacks, other goroutines) also touches. //confined:control on it, with //confined:entry on the loop, makes those other accesses foreign-access or undeclared-role findings: the sites listed.",
		Fix:   "Apply the fix together with the entry suggestion, then move the deviant accesses onto the loop (through its mailbox) or guard the field with a lock.",
	},
	{
		Category: "suggest-entry", Analyzer: "suggest", Level: Note,
		Title: "Goroutine loop that owns state",
		Text:  "A function started by a go statement (or exported, so that its callers start it) whose body loops receiving from a channel (not only a context's Done or a timer), and whose goroutine owns fields (suggest-control): the body of a role's goroutine. The role is control for the loop owning most, else named after its type. Pair it with owner.Bind() (missing-bind).",
		Fix:   "Apply the fix and call Bind() on a confine.Owner at the top of the loop.",
	},
	{
		Category: "suggest-spawns", Analyzer: "suggest", Level: Note,
		Title: "Function that runs its function parameter on another goroutine",
		Text:  "A func-typed parameter that reaches another goroutine: started by a go statement, called in a function that runs on another goroutine, handed to an asynchronous API or a spawns parameter, or sent on a channel or stored in a field whose values a goroutine calls (a worker pool's Submit, a callback registry). Without //confined:spawns, callers' function values are assumed to run synchronously.",
		Fix:   "Apply the fix; callers' closures passed to it become goroutine roots.",
	},
	{
		Category: "suggest-drain", Analyzer: "suggest", Level: Note,
		Title: "Function that drains a channel on a role's goroutine",
		Text:  "A function of a goroutine loop's role (suggest-entry) that loops over a non-blocking select receiving from a channel: it applies what waits in the mailbox, a //confined:drain.",
		Fix:   "Apply the fix; revokepath then checks that commits follow a drain.",
	},
	{
		Category: "suggest-commit", Analyzer: "suggest", Level: Note,
		Title: "Function that publishes a role's progress",
		Text:  "A function of a goroutine loop's role that reads state the role owns and calls another package's Commit*, MarkOffset, MarkMessage or MarkCommit* function: a //confined:commit, which revokepath checks for a drain before it and for running on its role.",
		Fix:   "Apply the fix; a commit reached from a callback becomes an inline-commit finding.",
	},
}
