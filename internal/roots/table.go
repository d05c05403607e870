// Package roots is the one place that knows where goroutines start: the table
// of asynchronous APIs, the user's additions to it, and the computation of
// which goroutine contexts each function of a package can run on.
package roots

import (
	"errors"
	"fmt"
	"go/types"
	"sort"
	"strconv"
	"strings"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/directive"
)

// AsyncAPI is a function or method that runs one of its function-typed
// arguments on another goroutine.
type AsyncAPI struct {
	// FullName is types.Func.FullName of the API: "time.AfterFunc",
	// "(*sync.WaitGroup).Go".
	FullName string
	// Arg is the index of the function argument in the Go call (receiver
	// not counted).
	Arg int
	// Display is how messages name the root: "time.AfterFunc".
	Display string
}

// builtinAPIs are the asynchronous APIs of the contract.
var builtinAPIs = []AsyncAPI{
	{"time.AfterFunc", 1, "time.AfterFunc"},
	{"context.AfterFunc", 1, "context.AfterFunc"},
	{"runtime.SetFinalizer", 1, "runtime.SetFinalizer"},
	{"(*sync.WaitGroup).Go", 0, "sync.WaitGroup.Go"},
	{"(*golang.org/x/sync/errgroup.Group).Go", 0, "errgroup.Group.Go"},
	{"(*golang.org/x/sync/errgroup.Group).TryGo", 0, "errgroup.Group.TryGo"},
	{"net/http.HandleFunc", 1, "http.HandleFunc"},
	{"(*net/http.ServeMux).HandleFunc", 1, "http.ServeMux.HandleFunc"},
	{"github.com/twmb/franz-go/pkg/kgo.OnPartitionsAssigned", 0, "kgo.OnPartitionsAssigned"},
	{"github.com/twmb/franz-go/pkg/kgo.OnPartitionsRevoked", 0, "kgo.OnPartitionsRevoked"},
	{"github.com/twmb/franz-go/pkg/kgo.OnPartitionsLost", 0, "kgo.OnPartitionsLost"},
}

// AsyncInterface is an interface whose implementations' methods are called
// by a library on its own goroutines.
type AsyncInterface struct {
	Pkg, Name string   // "net/http", "Handler"
	Methods   []string // the methods that become roots
	Display   string
}

var builtinInterfaces = []AsyncInterface{
	{"net/http", "Handler", []string{"ServeHTTP"}, "http.Handler"},
	{"github.com/IBM/sarama", "ConsumerGroupHandler", []string{"Setup", "Cleanup", "ConsumeClaim"}, "sarama.ConsumerGroupHandler"},
	{"github.com/Shopify/sarama", "ConsumerGroupHandler", []string{"Setup", "Cleanup", "ConsumeClaim"}, "sarama.ConsumerGroupHandler"},
}

// asyncConversions are named func types whose conversion makes a func value
// a handler called on other goroutines (http.HandlerFunc(f)).
var asyncConversions = map[string]string{
	"net/http.HandlerFunc": "http.HandlerFunc",
}

// Table is the set of asynchronous APIs in force: the built-in ones plus
// those the user adds with -confined.async.
type Table struct {
	apis map[string]AsyncAPI
	// user are the entries added with Add, as written, for Check.
	user []userAPI
}

type userAPI struct {
	spec, name string
	arg        int
}

// Default is the table used by the analyzers; the -confined.async flag adds
// to it (see Flag).
var Default = NewTable()

// NewTable returns a table holding the built-in APIs.
func NewTable() *Table {
	t := &Table{apis: map[string]AsyncAPI{}}
	for _, a := range builtinAPIs {
		t.apis[key(a.FullName, a.Arg)] = a
	}
	return t
}

// key identifies an API whatever the spelling of its receiver: "(*pkg.T).M",
// "pkg.(*T).M" and "pkg.T.M" are one method, as a method of T is one of *T
// too.
func key(name string, arg int) string {
	return receiverMarks.Replace(name) + ":" + strconv.Itoa(arg)
}

var receiverMarks = strings.NewReplacer("(*", "", "(", "", ")", "")

// Lookup reports whether argument arg of the function with the given
// FullName runs asynchronously.
func (t *Table) Lookup(fullName string, arg int) (AsyncAPI, bool) {
	a, ok := t.apis[key(fullName, arg)]
	return a, ok
}

// Add parses and adds one user entry, "pkgpath.Func:argN" or
// "pkgpath.(*T).Method:argN" (N counts from 0, receiver excluded). Whether
// it names a real function is checked once packages are loaded (Check).
func (t *Table) Add(spec string) error {
	i := strings.LastIndex(spec, ":")
	if i <= 0 {
		return fmt.Errorf("async API %q: want pkgpath.Func:argN, e.g. example.com/pool.(*Pool).Submit:arg0 or example.com/pool.Go:arg1", spec)
	}
	n, ok := directive.ParseArgIndex(spec[i+1:])
	if !ok {
		return fmt.Errorf("async API %q: after the colon comes the argument that runs on another goroutine, arg0 for the first (the receiver does not count)", spec)
	}
	name := spec[:i]
	t.add(name, n)
	t.user = append(t.user, userAPI{spec: spec, name: name, arg: n})
	return nil
}

func (t *Table) add(name string, arg int) {
	t.apis[key(name, arg)] = AsyncAPI{FullName: name, Arg: arg, Display: shortName(name)}
}

// Check resolves the entries added with Add against pkgs, by path, and
// returns an error naming each that denotes no function with a function
// argument there, with the closest match. With partial set, pkgs are only
// the packages one package sees, and entries of other packages are left
// for the packages that see them.
func (t *Table) Check(pkgs map[string]*types.Package, partial bool) error {
	var errs []error
	for _, u := range t.user {
		fn, why, known := directive.ResolveAsync(u.name, u.arg, pkgs)
		if fn == nil && (known || !partial) {
			errs = append(errs, fmt.Errorf("-confined.async=%s: %s", u.spec, why))
		}
	}
	return errors.Join(errs...)
}

// HasUserEntries reports whether Add was used: only then is Check needed.
func (t *Table) HasUserEntries() bool { return len(t.user) > 0 }

// MayName reports whether an entry added with Add may name a function of
// the package at path (its name starts with the path and a dot): Check
// needs the types of those packages, and only the paths of the others.
func (t *Table) MayName(path string) bool {
	for _, u := range t.user {
		if strings.HasPrefix(u.name, path+".") || strings.HasPrefix(u.name, "(*"+path+".") || strings.HasPrefix(u.name, "("+path+".") {
			return true
		}
	}
	return false
}

// shortName turns "(*example.com/pool.Pool).Submit" into "pool.Pool.Submit".
func shortName(full string) string {
	s := receiverMarks.Replace(full)
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// Entries lists the table sorted, for -flags help and tests.
func (t *Table) Entries() []AsyncAPI {
	var out []AsyncAPI
	for _, a := range t.apis {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i].FullName, out[i].Arg) < key(out[j].FullName, out[j].Arg) })
	return out
}

// Flag is the flag.Value behind -confined.async: each use (or each
// comma-separated item) adds an API to Default.
type Flag struct{ added []string }

func (f *Flag) String() string { return strings.Join(f.added, ",") }

func (f *Flag) Set(v string) error {
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if err := Default.Add(item); err != nil {
			return err
		}
		f.added = append(f.added, item)
	}
	return nil
}

// asyncAPI looks argument arg of the function fullName up in the table in
// force and then among the APIs declared in code, which it gathers on the
// first call: most packages never pass a function value to anything.
func (b *builder) asyncAPI(fullName string, arg int) (AsyncAPI, bool) {
	if a, ok := b.table.Lookup(fullName, arg); ok {
		return a, true
	}
	if b.declared == nil {
		b.declared = &Table{apis: map[string]AsyncAPI{}}
		if set := b.p.Directives; set != nil {
			for _, d := range set.Async {
				b.declared.add(d.Func.FullName(), d.Arg)
			}
		}
		for _, pf := range b.p.Pass.AllPackageFacts() {
			if f, ok := pf.Fact.(*facts.AsyncAPIs); ok {
				for _, api := range f.APIs {
					b.declared.add(api.Func, api.Arg)
				}
			}
		}
	}
	return b.declared.Lookup(fullName, arg)
}
