package main

import (
	"os"
	"strings"
	"testing"
)

func TestBaseline(t *testing.T) {
	testModule(t)
	out, stderr, code := runDriver(t, "-baseline-write", "base.json", "./...")
	if code != exitClean || out != "" {
		t.Fatalf("-baseline-write: exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	first, err := os.ReadFile("base.json")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(first), `"fingerprint"`); n < 2 {
		t.Fatalf("baseline records %d findings, want at least 2:\n%s", n, first)
	}
	runDriver(t, "-baseline-write", "base.json", "./...")
	if again, _ := os.ReadFile("base.json"); string(again) != string(first) {
		t.Errorf("baseline is not deterministic")
	}

	// Shift every finding down by three lines: nothing is new.
	src, err := os.ReadFile("pool/pool.go")
	if err != nil {
		t.Fatal(err)
	}
	write(t, "pool/pool.go", "// Line one.\n// Line two.\n\n"+string(src))
	js, stderr, code := runDriver(t, "-f", "json", "-baseline-check", "base.json", "./...")
	if code != exitClean || len(decodeFindings(t, js).Findings) != 0 {
		t.Fatalf("after a line shift: exit %d, findings:\n%s\nstderr:\n%s", code, js, stderr)
	}

	// One new finding, in the same file, is exactly what is reported.
	write(t, "pool/pool.go", "// Line one.\n// Line two.\n\n"+string(src)+"\n//confined:gaurdedby mu\nvar extra int\n")
	js, _, code = runDriver(t, "-f", "json", "-baseline-check", "base.json", "./...")
	got := decodeFindings(t, js).Findings
	if code != exitFindings || len(got) != 1 || got[0].Category != "directive-unknown" {
		t.Fatalf("after adding one finding: exit %d, want exactly it:\n%s", code, js)
	}

	// A fixed finding leaves the rest matched and says the baseline is stale.
	write(t, "pool/pool.go", strings.Replace(string(src), "gaurdedby", "guardedby", 1))
	_, stderr, code = runDriver(t, "-baseline-check", "base.json", "./...")
	if code != exitClean || !strings.Contains(stderr, "baseline findings are gone") {
		t.Errorf("after a fix: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestFingerprintOccurrences(t *testing.T) {
	t.Chdir(t.TempDir())
	write(t, "a.go", "x\nsame\nsame\n")
	f := func(line int) finding {
		return finding{Analyzer: "lockorder", Category: "double-lock", Message: "m at a.go:" + string(rune('0'+line)) + " [double-lock]",
			Posn: position{File: "a.go", Line: line, Column: 1}}
	}
	fps := fingerprints([]finding{f(2), f(3)}, newSources())
	if fps[0] == fps[1] {
		t.Errorf("identical findings on identical lines need distinct fingerprints")
	}
	if stripLines("held at a.go:12:3 and line 7") != "held at a.go and line" {
		t.Errorf("stripLines: %q", stripLines("held at a.go:12:3 and line 7"))
	}
}

func TestBaselineFlagsExclusive(t *testing.T) {
	if _, _, code := runDriver(t, "-baseline-write", "a", "-baseline-check", "b", "./..."); code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
}
