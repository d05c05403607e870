package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Determinism: the same run twice gives byte-identical output, in every
// format and whatever GOMAXPROCS is (issue 9). Map iteration order,
// goroutine scheduling in the checker and pointer values must never reach
// the output.

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// confinelintBinary builds the binary once for the tests that run it as a
// process.
func confinelintBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs it over whole modules")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "confinelint-bin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "confinelint")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	if vetMode(os.Args[1:]) {
		// The standalone driver, run in-process by the tests, runs go vet
		// with this test binary as the tool.
		main()
		return
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// runBinary runs the binary in dir and returns stdout, stderr and the exit
// status.
func runBinary(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(confinelintBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running confinelint: %v", err)
	}
	return stdout.String(), stderr.String(), code
}

// determinismPackage is one package with findings of all three analyzers;
// the module holds several copies so that any map-order dependence across
// packages, functions or findings shows.
const determinismPackage = `package PKG

import "sync"

type Broker struct{}

// OnRevoked runs f on the broker's goroutine.
//
//confined:spawns f
func (b *Broker) OnRevoked(f func()) { go f() }

func (b *Broker) Commit(m map[int32]int64) {}

type Consumer struct {
	b       *Broker
	mu      sync.Mutex
	other   sync.Mutex
	mailbox chan int64
	offsets map[int32]int64 //confined:control
	hits    int             //confined:guardedby mu
	misses  int             //confined:guardedby mu
}

//confined:entry
func (c *Consumer) run() {
	c.b.OnRevoked(c.onRevoked)
	for v := range c.mailbox {
		c.offsets[0] = v
		c.mu.Lock()
		c.drain()
		c.commit()
		c.mu.Unlock()
	}
}

//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case v := <-c.mailbox:
			c.offsets[1] = v
		default:
			return
		}
	}
}

//confined:commit
//confined:requires mu
func (c *Consumer) commit() { c.b.Commit(c.offsets) }

func (c *Consumer) onRevoked() {
	c.mu.Lock()
	c.commit()
	c.mu.Unlock()
	c.offsets[2] = 0
	c.hits++
	c.misses++
}

func (c *Consumer) ab() {
	c.mu.Lock()
	c.other.Lock()
	c.other.Unlock()
	c.mu.Unlock()
}

func (c *Consumer) ba() {
	c.other.Lock()
	c.mu.Lock()
	c.mu.Unlock()
	c.other.Unlock()
}

//confined:contrl
func (c *Consumer) typo() {}

//confined:guardedby nosuch
var orphan int
`

// determinismModule writes the module and returns its directory.
func determinismModule(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{"go.mod": "module example.com/det\n\ngo 1.26\n"}
	for _, p := range []string{"alpha", "beta", "gamma", "delta"} {
		files[p+"/"+p+".go"] = strings.ReplaceAll(determinismPackage, "PKG", p)
	}
	writeFiles(t, dir, files)
	return dir
}

func TestDeterministicOutput(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range []struct{ name, dir string }{
		{"examples", examples},
		{"all-analyzers", determinismModule(t)},
	} {
		t.Run(mod.name, func(t *testing.T) {
			jsonOut, _, code := runBinary(t, mod.dir, nil, "-f", "json", "./...")
			if code != exitFindings {
				t.Fatalf("exit %d, want %d (findings)", code, exitFindings)
			}
			if mod.name == "all-analyzers" {
				requireAllAnalyzers(t, jsonOut)
			}
			for _, format := range []string{"text", "json", "sarif"} {
				first, stderr1, code1 := runBinary(t, mod.dir, nil, "-f", format, "./...")
				second, stderr2, code2 := runBinary(t, mod.dir, nil, "-f", format, "./...")
				same(t, format+": two runs", first, second)
				same(t, format+": two runs, stderr", stderr1, stderr2)
				if code1 != code2 {
					t.Errorf("%s: exit status %d then %d", format, code1, code2)
				}
				if format == "json" {
					same(t, "json: first run vs. the earlier one", jsonOut, first)
					one, _, _ := runBinary(t, mod.dir, []string{"GOMAXPROCS=1"}, "-f", format, "./...")
					same(t, format+": GOMAXPROCS=1 vs. default", one, first)
				}
				if format == "text" && strings.Contains(first, "0x") {
					t.Errorf("text output holds what looks like a pointer:\n%s", first)
				}
			}
		})
	}
}

// requireAllAnalyzers fails unless the JSON output has findings of every
// analyzer: a determinism test of two empty outputs proves nothing.
func requireAllAnalyzers(t *testing.T, out string) {
	t.Helper()
	var v struct{ Findings []struct{ Analyzer string } }
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("bad JSON: %v", err)
	}
	seen := map[string]int{}
	for _, f := range v.Findings {
		seen[f.Analyzer]++
	}
	for _, a := range analyzers {
		if seen[a.Name] == 0 {
			t.Errorf("no %s finding in the determinism module; got %v", a.Name, seen)
		}
	}
}

func same(t *testing.T, what, a, b string) {
	t.Helper()
	if a == b {
		return
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			t.Errorf("%s: outputs differ at line %d:\n  %s\n  %s", what, i+1, x, y)
			return
		}
	}
}
