// Package roots is the one place that knows where goroutines start: the table
// of asynchronous APIs, the user's additions to it, and the computation of
// which goroutine contexts each function of a package can run on.
package roots

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
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

func key(name string, arg int) string { return name + ":" + strconv.Itoa(arg) }

// Lookup reports whether argument arg of the function with the given
// FullName runs asynchronously.
func (t *Table) Lookup(fullName string, arg int) (AsyncAPI, bool) {
	a, ok := t.apis[key(fullName, arg)]
	return a, ok
}

// Add parses and adds one user entry, "pkgpath.Func:argN" or
// "(*pkgpath.T).Method:argN" (N counts from 0, receiver excluded).
func (t *Table) Add(spec string) error {
	i := strings.LastIndex(spec, ":arg")
	if i <= 0 {
		return fmt.Errorf("async API %q: want pkgpath.Func:argN, e.g. example.com/pool.(*Pool).Submit:arg0 or example.com/pool.Go:arg1", spec)
	}
	n, err := strconv.Atoi(spec[i+len(":arg"):])
	if err != nil || n < 0 {
		return fmt.Errorf("async API %q: argument index after :arg must be a number >= 0", spec)
	}
	name := normalizeMethod(spec[:i])
	t.apis[key(name, n)] = AsyncAPI{FullName: name, Arg: n, Display: shortName(name)}
	return nil
}

// normalizeMethod accepts "pkg.(*T).M" as well as types.Func.FullName's
// "(*pkg.T).M".
func normalizeMethod(name string) string {
	if j := strings.Index(name, ".(*"); j > 0 && !strings.HasPrefix(name, "(") {
		rest := name[j+3:] // "T).M"
		return "(*" + name[:j] + "." + rest
	}
	if j := strings.Index(name, ".("); j > 0 && !strings.HasPrefix(name, "(") {
		return "(" + name[:j] + "." + name[j+2:]
	}
	return name
}

// shortName turns "(*example.com/pool.Pool).Submit" into "pool.Pool.Submit".
func shortName(full string) string {
	s := strings.NewReplacer("(*", "", "(", "", ")", "").Replace(full)
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
