// Command sweep runs confinelint over a large body of Go code, standalone
// and as go vet's tool, and counts what must never happen: panics,
// diagnostics without a position, duplicated diagnostics, and messages that
// leak pointer addresses. It exits 1 if any count is not zero.
//
//	go run ./scripts/sweep [-dir DIR] [-vet=false] [-standalone=false] PATTERNS...
//
// CI runs it on std; bench/ describes the third-party corpus.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

var (
	dir        = flag.String("dir", "", "run in this directory (a module whose packages PATTERNS name)")
	bin        = flag.String("bin", "", "confinelint binary (default: build ./cmd/confinelint)")
	vet        = flag.Bool("vet", true, "sweep in go vet -vettool mode")
	standalone = flag.Bool("standalone", true, "sweep in standalone mode")
)

// counts is the sweep's report.
type counts struct {
	Findings, Panics, Positionless, Duplicates, Addresses int
	Examples                                              []string
}

var (
	positioned = regexp.MustCompile(`^\S+\.go:\d+:\d+: `)
	address    = regexp.MustCompile(`0x[0-9a-f]{6,}`)
)

func main() {
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"std"}
	}
	tool := *bin
	if tool == "" {
		tool = filepath.Join(os.TempDir(), "confinelint-sweep")
		build := exec.Command("go", "build", "-o", tool, "./cmd/confinelint")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fatal("building confinelint: %v", err)
		}
	}
	tool, _ = filepath.Abs(tool)
	failed := false
	if *standalone {
		start := time.Now()
		c := sweepStandalone(tool, patterns)
		failed = report("standalone", c, time.Since(start)) || failed
	}
	if *vet {
		start := time.Now()
		c := sweepVet(tool, patterns)
		failed = report("go vet -vettool", c, time.Since(start)) || failed
	}
	if failed {
		os.Exit(1)
	}
}

func sweepStandalone(tool string, patterns []string) counts {
	cmd := exec.Command(tool, append([]string{"-json"}, patterns...)...)
	cmd.Dir = *dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var c counts
	c.Panics = strings.Count(stderr.String(), "panic:")
	if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() != 0 && exit.ExitCode() != 3 && exit.ExitCode() != 1 {
		c.Panics++
	}
	var out struct {
		Findings []struct {
			Analyzer string
			Message  string
			Posn     struct {
				File         string
				Line, Column int
			}
			Related []struct {
				Message string
				Posn    struct {
					File string
					Line int
				}
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		c.Examples = append(c.Examples, "unparsable JSON output: "+err.Error())
		c.Panics++
		return c
	}
	seen := map[string]bool{}
	for _, f := range out.Findings {
		c.Findings++
		line := fmt.Sprintf("%s:%d:%d: %s (%s)", f.Posn.File, f.Posn.Line, f.Posn.Column, f.Message, f.Analyzer)
		c.check(line, f.Posn.File == "" || f.Posn.Line == 0, seen)
		for _, r := range f.Related {
			c.checkRelated(fmt.Sprintf("%s:%d: \t%s", r.Posn.File, r.Posn.Line, r.Message))
		}
	}
	c.stderrExamples(stderr.String())
	return c
}

func sweepVet(tool string, patterns []string) counts {
	cmd := exec.Command("go", append([]string{"vet", "-vettool=" + tool}, patterns...)...)
	cmd.Dir = *dir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	_ = cmd.Run() // findings make go vet exit non-zero
	var c counts
	c.Panics = strings.Count(stderr.String(), "panic:")
	seen := map[string]bool{}
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "go: ") {
			continue
		}
		if strings.Contains(line, "panic") || strings.HasPrefix(line, "vet: ") {
			c.Examples = append(c.Examples, line)
			continue
		}
		if loc := positioned.FindStringIndex(line); loc != nil && strings.HasPrefix(line[loc[1]:], "\t") {
			// Related information of the finding above ("pos: \tmsg"):
			// two findings may share a hop, it is no duplicate.
			c.checkRelated(line)
			continue
		}
		c.Findings++
		c.check(line, !positioned.MatchString(line), seen)
	}
	return c
}

func (c *counts) check(line string, positionless bool, seen map[string]bool) {
	if positionless {
		c.Positionless++
		c.Examples = append(c.Examples, "positionless: "+line)
	}
	if seen[line] {
		c.Duplicates++
		c.Examples = append(c.Examples, "duplicate: "+line)
	}
	seen[line] = true
	if address.MatchString(line) {
		c.Addresses++
		c.Examples = append(c.Examples, "address: "+line)
	}
}

// checkRelated checks one hop of a finding's chain: its message must not
// leak an address either. (Hops without a position are dropped by diag.)
func (c *counts) checkRelated(line string) {
	if address.MatchString(line) {
		c.Addresses++
		c.Examples = append(c.Examples, "address in related information: "+line)
	}
}

func (c *counts) stderrExamples(stderr string) {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "panic") || strings.Contains(line, "goroutine ") {
			c.Examples = append(c.Examples, line)
		}
	}
}

// report prints the counts and returns whether the sweep failed.
func report(mode string, c counts, took time.Duration) bool {
	fmt.Printf("%s: findings=%d panics=%d positionless=%d duplicates=%d addresses=%d (%s)\n",
		mode, c.Findings, c.Panics, c.Positionless, c.Duplicates, c.Addresses, took.Round(time.Second))
	sort.Strings(c.Examples)
	for i, e := range c.Examples {
		if i == 20 {
			fmt.Printf("  ... %d more\n", len(c.Examples)-20)
			break
		}
		fmt.Println("  " + e)
	}
	return c.Panics+c.Positionless+c.Duplicates+c.Addresses > 0
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sweep: "+format+"\n", args...)
	os.Exit(1)
}
