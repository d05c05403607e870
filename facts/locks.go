package facts

import "strings"

// LockSummary is the lock behaviour of an exported function, for callers in
// other packages: which locks it needs held, which it leaves held or
// releases, and which it takes (for lock-order edges through the call).
type LockSummary struct {
	Requires       []string // lock paths (see DeclItem.Lock) needed exclusively
	RequiresShared []string
	Acquires       []string // held on return
	Releases       []string // released on return
	// Takes lists lock classes acquired (and possibly released) inside,
	// with where, so a caller holding L records the edge L -> class.
	Takes []Take
	// Effects is the net effect on the caller's locks, with classes, in
	// the order acquires, releases, try-acquires, each sorted by Path.
	Effects []Effect
}

// Effect is one lock a function leaves held (Release false) or releases.
// With Try, it is left held exactly when the function reports success:
// result Result is nil (Nil) or not nil (a try-acquire, as bbolt's
// beginTx returning the transaction that holds the lock).
type Effect struct {
	Path    string // "recv.mu", "param1.mu" or "g:pkgpath.var"
	Class   string // lock class key
	Shared  bool
	Release bool
	Try     bool
	Result  int
	Nil     bool
}

// Take is one lock class acquired inside a function.
type Take struct {
	Class string // lock class key
	Pos   string // "file.go:12" witness, file base name only
	Via   string // call chain inside, "f -> g"
	// Path is the lock's path relative to the function ("recv.mu",
	// "param0.mu", "g:pkgpath.var"), "" when it is local to the function:
	// a caller holding the same path deadlocks (double lock).
	Path   string
	Shared bool
	// Cond counts the conditional steps down to the acquisition: 0 when
	// the function takes the lock on every path to its return (and so does
	// every function called down to it), the only takes a caller's double
	// lock is reported for.
	Cond int
	// Branch is the part of Cond that is branches, not iterations of a
	// loop that runs on every path: a caller holding the lock deadlocks
	// whenever such a loop iterates (a double lock needs Branch 0).
	Branch int
	// Loose: reached through a call that may not run the function it was
	// summarised from (one of an interface's implementations, a function
	// stored in a func-typed field): never a certain take.
	Loose bool
	// Sub is the value field holding the lock's struct ("pkg.Conn.in"
	// for c.in.mu), "" when unknown: locks of one class under different
	// value fields are different locks (see Edge.FromSub).
	Sub string
	// Fresh: the lock of an object the function made and had handed to
	// no other code when it took it: no caller's lock orders before it.
	Fresh bool
}

func (*LockSummary) AFact() {}

func (s *LockSummary) String() string {
	var parts []string
	add := func(name string, xs []string) {
		if len(xs) > 0 {
			parts = append(parts, name+"="+strings.Join(xs, ","))
		}
	}
	add("requires", s.Requires)
	add("requires_shared", s.RequiresShared)
	add("acquires", s.Acquires)
	add("releases", s.Releases)
	var takes []string
	for _, t := range s.Takes {
		takes = append(takes, t.Class)
	}
	add("takes", takes)
	return "locks(" + strings.Join(parts, " ") + ")"
}

// LockEdges is a package fact: every acquired-while-holding edge observed in
// the package and its dependencies' facts, so an inversion spanning packages
// is found in the package that closes the cycle.
type LockEdges struct {
	Edges []Edge // sorted by From, To
}

// Edge says lock class To was acquired while From was held.
type Edge struct {
	From, To string
	// FromSub, ToSub refine the classes: the value field holding the
	// lock's struct (Take.Sub), "" when unknown.
	FromSub, ToSub string
	// Witness describes where: "pkg.Func: a.go:10 holds From, a.go:12 takes To".
	Witness string
	// Test: witnessed in a _test.go file. Must: To is taken for sure once
	// the witness gets there (the evidence a cycle of three or more locks
	// needs to be reported).
	Test, Must bool
	// FromShared, ToShared: every witness held From, took To, as a read
	// lock (an inversion of read locks deadlocks only behind a writer).
	FromShared, ToShared bool
}

func (*LockEdges) AFact() {}

func (e *LockEdges) String() string {
	var parts []string
	for _, x := range e.Edges {
		parts = append(parts, x.From+"->"+x.To)
	}
	return "edges(" + strings.Join(parts, ", ") + ")"
}

// LockDispatches is an object fact on an interface type: the calls of its
// methods that the declaring package makes with locks held. An importing
// package that implements the interface, and hands its values to the
// declaring package as it, runs its methods under those locks: the edges
// from each held lock to what the implementation takes are its own.
type LockDispatches struct {
	Calls []Dispatch // sorted by Method, Class, Sub
}

// Dispatch is one method call through the interface with one lock held.
type Dispatch struct {
	Method string
	Class  string // the held lock's class key
	Sub    string // its refinement (Edge.FromSub)
	Shared bool   // held as a read lock
	// Witness: "in pkg.Func (a.go:10 -> a.go:12)", where the lock was
	// taken and where the method is called.
	Witness string
	Test    bool // the call is in a _test.go file
	// Path is the held lock as the called method reaches it through its
	// parameters ("param0.Logger.mu": the entry passed holds the logger
	// whose lock is held), "" when none leads to it.
	Path string
}

func (*LockDispatches) AFact() {}

func (d *LockDispatches) String() string {
	var parts []string
	for _, c := range d.Calls {
		parts = append(parts, c.Method+" under "+c.Class)
	}
	return "dispatches(" + strings.Join(parts, ", ") + ")"
}
