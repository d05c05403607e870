package facts

import "strings"

// CommitObligation marks an exported function that can reach a
// //confined:commit without a preceding drain of the same role: callers
// inherit the obligation to drain first.
type CommitObligation struct {
	Role   string   // role whose mailbox must be drained
	Commit string   // the commit function reached, "pkg.(*T).commit"
	Chain  []string // from this function to the commit
}

func (*CommitObligation) AFact() {}

func (c *CommitObligation) String() string {
	return "obligation(" + c.Role + ": " + strings.Join(c.Chain, " -> ") + ")"
}
