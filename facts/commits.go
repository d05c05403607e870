package facts

import "strings"

// CommitObligation summarises, for an exported function, the
// //confined:commit functions its body reaches. Importers treat a call to it
// like a call to those commits: Undrained ones oblige the caller to drain
// first (the function passes its obligation up), and every one in Reaches
// is an inline commit when the caller runs on a foreign goroutine.
type CommitObligation struct {
	// Undrained lists, per (Role, Lock), a commit reachable without a drain
	// of Role after the last acquisition of Lock (Lock "" for a commit
	// that requires no lock: without any drain before it). Sorted by
	// Role, then Lock.
	Undrained []CommitPath
	// Reaches lists, per role, one commit the function reaches, drained
	// or not. Sorted by Role.
	Reaches []CommitPath
}

// CommitPath is one way to reach a commit.
type CommitPath struct {
	Role     string   // role whose progress the commit publishes
	Lock     string   // lock class key (see lockop.ClassKey) the drain must follow; "" for none
	LockName string   // the lock as messages name it: "Consumer.mu"
	Commit   string   // the commit function reached: "a.Consumer.commit"
	Chain    []string // from the summarised function to the commit, package-qualified
}

func (*CommitObligation) AFact() {}

func (c *CommitObligation) String() string {
	var parts []string
	for _, u := range c.Undrained {
		s := "undrained " + u.Role
		if u.LockName != "" {
			s += " after " + u.LockName
		}
		parts = append(parts, s+": "+strings.Join(u.Chain, " -> "))
	}
	for _, r := range c.Reaches {
		parts = append(parts, "reaches "+r.Role+": "+strings.Join(r.Chain, " -> "))
	}
	return "commits(" + strings.Join(parts, "; ") + ")"
}
