package commits

import (
	"go/token"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/program"
)

// hop names one function of a chain twice: as this package's messages name
// it, and package-qualified for facts read by importers.
type hop struct {
	name, qname string
}

func funcHop(fn *ssa.Function, p *program.Package) hop {
	return hop{name: program.FuncName(fn, p.Pass.Pkg), qname: program.FuncName(fn, nil)}
}

// path is one way to reach a commit from a function: the obligation it
// carries (a drain of role after the last acquisition of lock) and the chain
// that proves it.
type path struct {
	role     string
	lock     string // lock class key; "" for a commit that requires no lock
	lockName string
	commit   hop
	chain    []hop       // from the function holding the path to the commit
	sites    []token.Pos // sites[i] is where chain[i] calls chain[i+1]; NoPos if unknown
}

// via returns p as seen from caller, which calls p's first function at site.
func (p path) via(caller hop, site token.Pos) path {
	q := p
	q.chain = append([]hop{caller}, p.chain...)
	q.sites = append([]token.Pos{site}, p.sites...)
	return q
}

func (p path) names() []string {
	out := make([]string, len(p.chain))
	for i, h := range p.chain {
		out[i] = h.name
	}
	return out
}

func (p path) toFact() facts.CommitPath {
	chain := make([]string, len(p.chain))
	for i, h := range p.chain {
		chain[i] = h.qname
	}
	return facts.CommitPath{Role: p.role, Lock: p.lock, LockName: p.lockName, Commit: p.commit.qname, Chain: chain}
}

func pathFromFact(c facts.CommitPath) path {
	p := path{role: c.Role, lock: c.Lock, lockName: c.LockName, commit: hop{c.Commit, c.Commit}}
	for _, name := range c.Chain {
		p.chain = append(p.chain, hop{name, name})
		p.sites = append(p.sites, token.NoPos)
	}
	if len(p.sites) > 0 {
		p.sites = p.sites[:len(p.sites)-1]
	}
	return p
}

// lockShortName turns a lock class key ("example.com/a.Consumer.mu") into
// the name messages use ("Consumer.mu").
func lockShortName(class string) string {
	if i := strings.LastIndex(class, "/"); i >= 0 {
		class = class[i+1:]
	}
	if i := strings.Index(class, "."); i >= 0 {
		class = class[i+1:]
	}
	return class
}
