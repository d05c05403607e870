package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/confinelint/confinelint/internal/checks"
)

const workflowPath = "../../.github/workflows/confinelint.yml"

type workflow struct {
	Jobs map[string]struct {
		Steps []struct {
			Name string
			Uses string
			Run  string
			With map[string]string
		}
	}
}

// TestWorkflow parses the CI workflow and checks that every confinelint
// and go vet -vettool invocation uses flags the binary defines, and that
// the SARIF the analysis writes is the file the upload step reads.
func TestWorkflow(t *testing.T) {
	data, err := os.ReadFile(workflowPath)
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s: %v", workflowPath, err)
	}
	var scripts []string
	uploaded := ""
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			scripts = append(scripts, s.Run)
			if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@") {
				uploaded = s.With["sarif_file"]
			}
		}
	}
	kinds, problems := checkInvocations(workflowPath, strings.Join(scripts, "\n"))
	for _, p := range problems {
		t.Error(p)
	}
	if kinds["confinelint"] == 0 || kinds["vet"] == 0 {
		t.Errorf("workflow lacks a confinelint run or a go vet gate: %v", kinds)
	}
	m := regexp.MustCompile(`confinelint -f sarif [^>]*> *(\S+)`).FindStringSubmatch(strings.Join(scripts, "\n"))
	if m == nil || uploaded == "" || m[1] != uploaded {
		t.Errorf("upload-sarif reads %q but the SARIF is written to %v", uploaded, m)
	}
}

// TestDocsInvocations checks the commands shown in the user docs.
func TestDocsInvocations(t *testing.T) {
	for _, doc := range []string{"../../docs/running.md", "../../docs/ci.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		kinds, problems := checkInvocations(doc, string(data))
		for _, p := range problems {
			t.Error(p)
		}
		if kinds["confinelint"] == 0 {
			t.Errorf("%s shows no confinelint command", doc)
		}
	}
}

// checkInvocations finds the commands in script (one per line after
// joining continuations, split at pipes and ;, && and ||) that run
// confinelint or go vet, checks their flags, and counts them by kind.
func checkInvocations(where, script string) (kinds map[string]int, problems []string) {
	standaloneFlags := newFlagSet(&options{enable: map[string]*triState{}}, io.Discard)
	kinds = map[string]int{}
	script = strings.ReplaceAll(script, "\\\n", " ")
	script = regexp.MustCompile(`\$\((command -v|which) confinelint\)`).ReplaceAllString(script, "CONFINELINT")
	for _, line := range strings.Split(script, "\n") {
		for _, cmd := range regexp.MustCompile(`\|\||&&|[|;]|\$\(`).Split(line, -1) {
			words := strings.Fields(strings.TrimPrefix(strings.TrimSpace(cmd), "$ "))
			for len(words) > 0 && strings.Contains(words[0], "=") { // FOO=bar cmd
				words = words[1:]
			}
			switch {
			case len(words) > 0 && words[0] == "confinelint":
				kinds["confinelint"]++
				problems = append(problems, checkFlags(where, line, words[1:], standaloneFlags, nil)...)
			case len(words) > 2 && words[0] == "go" && words[1] == "vet" && strings.Contains(line, "-vettool"):
				kinds["vet"]++
				problems = append(problems, checkFlags(where, line, words[2:], standaloneFlags, goVetFlags)...)
			}
		}
	}
	return kinds, problems
}

// goVetFlags are go vet's own flags (and build flags a doc may show); the
// rest are forwarded to the vet tool.
var goVetFlags = map[string]bool{"vettool": true, "n": true, "x": true, "tags": true, "C": true, "mod": true, "v": true}

func checkFlags(where, line string, args []string, fs *flag.FlagSet, own map[string]bool) (problems []string) {
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			return problems // first package pattern: flag parsing stops
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if own[name] {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			errorf("%s: confinelint has no flag -%s: %s", where, name, strings.TrimSpace(line))
			continue
		}
		if own != nil && (name == "f" || name == "json" || strings.HasPrefix(name, "baseline") || name == "test") {
			errorf("%s: -%s is a standalone flag, go vet does not forward it: %s", where, name, line)
		}
		_, value, _ := strings.Cut(a, "=")
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) && i+1 < len(args) {
			i++ // -f sarif: the value is the next word
			value = args[i]
		}
		if name == "f" && value != "text" && value != "json" && value != "sarif" {
			errorf("%s: -f %s: want text, json or sarif: %s", where, value, line)
		}
	}
	return problems
}

func TestCheckInvocationsCatchesBadFlags(t *testing.T) {
	script := "confinelint -f sarif -baseline-check b.json ./...\n" +
		"x=1 confinelint -confined.asink=x ./... | tee out\n" +
		"confinelint -f xml ./...\n" +
		"go vet -vettool=$(command -v confinelint) -f json ./...\n"
	kinds, problems := checkInvocations("test", script)
	if kinds["confinelint"] != 3 || kinds["vet"] != 1 {
		t.Errorf("kinds %v", kinds)
	}
	want := []string{"no flag -confined.asink", "-f xml", "-f is a standalone flag"}
	if len(problems) != len(want) {
		t.Fatalf("problems %q, want %d", problems, len(want))
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d = %q, want %q", i, problems[i], w)
		}
	}
}

// TestAnalyzerURLs checks that each analyzer's URL and each SARIF helpUri
// lands on a heading of docs/checks.md.
func TestAnalyzerURLs(t *testing.T) {
	data, err := os.ReadFile("../../docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			anchors[h] = true
		} else if h, ok := strings.CutPrefix(line, "### "); ok {
			anchors[h] = true
		}
	}
	for _, a := range analyzers {
		_, frag, _ := strings.Cut(a.URL, "#")
		if !strings.Contains(a.URL, "docs/checks.md#") || !anchors[frag] {
			t.Errorf("%s: URL %q is no heading of docs/checks.md", a.Name, a.URL)
		}
	}
	for _, c := range checks.All {
		_, frag, _ := strings.Cut(c.HelpURI(), "#")
		if !anchors[frag] {
			t.Errorf("%s: helpUri %q is no heading of docs/checks.md", c.ID(), c.HelpURI())
		}
	}
}
