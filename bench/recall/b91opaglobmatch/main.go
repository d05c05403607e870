// Project: open-policy-agent/opa (topdown/glob.go builtinGlobMatch, evaluated by topdown/eval.go), v0.45.0, October 2022.
// Bug: builtinGlobMatch locks the package-level globCacheLock with a deferred Unlock and then returns iter(result), but iter continues evaluating the rest of the rule body, so a second glob.match in the same body locks globCacheLock again on the same goroutine before the first call has returned (issue #5273, fixed by PR #5274, which moves the cache lookup into a function whose deferred Unlock runs before iter).
package main

import (
	"fmt"
	"path"
	"strings"
	"sync"
)

// Term is a tiny stand-in for ast.Term.
type Term struct {
	Value interface{}
}

func StringTerm(s string) *Term { return &Term{Value: s} }
func BooleanTerm(b bool) *Term  { return &Term{Value: b} }

// Expr is one call expression of a rule body, e.g. glob.match(p, [], s).
type Expr struct {
	Operator string
	Operands []*Term
}

// BuiltinContext is passed to every builtin, as in topdown.
type BuiltinContext struct {
	Location string
}

// BuiltinFunc mirrors topdown.BuiltinFunc: results are passed to iter, which
// continues evaluation of the query.
type BuiltinFunc func(bctx BuiltinContext, operands []*Term, iter func(*Term) error) error

var builtinFunctions = map[string]BuiltinFunc{}

func RegisterBuiltinFunc(name string, f BuiltinFunc) { builtinFunctions[name] = f }

// glob.Glob stand-in.
type globPattern struct {
	pattern string
	delim   []rune
}

func globCompile(pattern string, delimiters ...rune) (*globPattern, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	return &globPattern{pattern: pattern, delim: delimiters}, nil
}

func (g *globPattern) Match(s string) bool {
	ok, _ := path.Match(g.pattern, s)
	return ok
}

var globCacheLock = sync.Mutex{}
var globCache map[string]*globPattern

func builtinGlobMatch(_ BuiltinContext, operands []*Term, iter func(*Term) error) error {
	pattern := operands[0].Value.(string)
	delimiters := operands[1].Value.([]rune)
	if len(delimiters) == 0 {
		delimiters = []rune{'.'}
	}
	match := operands[2].Value.(string)

	builder := strings.Builder{}
	builder.WriteString(pattern)
	builder.WriteRune('-')
	for _, v := range delimiters {
		builder.WriteRune(v)
	}
	id := builder.String()

	globCacheLock.Lock()
	defer globCacheLock.Unlock()
	p, ok := globCache[id]
	if !ok {
		var err error
		if p, err = globCompile(pattern, delimiters...); err != nil {
			return err
		}
		globCache[id] = p
	}

	m := p.Match(match)
	return iter(BooleanTerm(m))
}

// eval walks the body one expression at a time; each builtin's iter callback
// evaluates the next expression (topdown's continuation-passing style).
type eval struct {
	body    []*Expr
	results []bool
}

func (e *eval) evalStep(index int, done func() error) error {
	if index >= len(e.body) {
		return done()
	}
	expr := e.body[index]
	f := builtinFunctions[expr.Operator]
	bctx := BuiltinContext{Location: fmt.Sprintf("policy.rego:%d", index+4)}
	return f(bctx, expr.Operands, func(result *Term) error {
		if b, ok := result.Value.(bool); ok && !b {
			return nil // expression undefined/false: backtrack
		}
		e.results = append(e.results, true)
		return e.evalStep(index+1, done)
	})
}

func init() {
	globCache = map[string]*globPattern{}
	RegisterBuiltinFunc("glob.match", builtinGlobMatch)
}

func main() {
	// package p
	// p {
	//     glob.match("*.github.com", [], "api.github.com")
	//     glob.match("*.github.com", [], "api.github.com")
	// }
	call := func() *Expr {
		return &Expr{Operator: "glob.match", Operands: []*Term{
			StringTerm("*.github.com"), {Value: []rune{}}, StringTerm("api.github.com"),
		}}
	}
	e := &eval{body: []*Expr{call(), call()}}
	defined := false
	if err := e.evalStep(0, func() error { defined = true; return nil }); err != nil {
		fmt.Println("eval error:", err)
		return
	}
	fmt.Println("data.p.p defined:", defined)
}
