package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The standalone driver runs go vet with itself as the tool (vetdriver.go);
// the in-process driver (CONFINELINT_DRIVER=inprocess) is how it worked
// before. Their output must be the same, byte for byte: stdout, stderr and
// exit status, in every format and with every flag, and -fix must write
// the same files.

var inProcessEnv = []string{driverEnv + "=" + driverInProcess}

// sameAsInProcess runs both drivers in dir and fails on any difference.
func sameAsInProcess(t *testing.T, dir string, args ...string) (stdout string, code int) {
	t.Helper()
	newOut, newErr, newCode := runBinary(t, dir, nil, args...)
	oldOut, oldErr, oldCode := runBinary(t, dir, inProcessEnv, args...)
	what := strings.Join(args, " ")
	same(t, what+": stdout", oldOut, newOut)
	same(t, what+": stderr", oldErr, newErr)
	if oldCode != newCode {
		t.Errorf("%s: exit status %d in process, %d through go vet", what, oldCode, newCode)
	}
	return newOut, newCode
}

// multiModule copies testdata/multi (packages with cross-package facts,
// internal and external tests, a build-tagged file, a generated file, a
// suggested fix and findings of every analyzer) to a temporary directory.
func multiModule(t *testing.T) string {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/multi")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Each in-process run loads every dependency from source, so the flags
// are combined: one run per format, each with different flags. The JSON
// output holds every field of every finding; text and SARIF are rendered
// from the same findings.
func TestDriversAgree(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	if out, code := sameAsInProcess(t, examples, "-f", "json", "./..."); code != exitFindings || !strings.Contains(out, `"related"`) {
		t.Errorf("examples: exit %d, output %q: the comparison proves nothing", code, out)
	}
	sameAsInProcess(t, examples, "-f", "text", "-test=false", "./consumer", "./broker")
	sameAsInProcess(t, examples, "-f", "sarif", "./...")

	multi := multiModule(t)
	async := "-confined.async=example.com/multi/pool.(*Pool).Run:arg0"
	sameAsInProcess(t, multi, "-f", "sarif", "./...")
	sameAsInProcess(t, multi, "-f", "text", "-test=false", "-tags=extra", "./...")
	sameAsInProcess(t, multi, "-json", "-lockorder", async, "./...")
	// An -confined.async entry that names nothing fails the run, with the
	// closest match, before anything is analysed.
	if _, code := sameAsInProcess(t, multi, strings.Replace(async, "Run", "Rnu", 1), "./..."); code != exitError {
		t.Errorf("misspelled -confined.async: exit %d, want %d", code, exitError)
	}
	// -C: positions relative to the directory the run moves to.
	sameAsInProcess(t, filepath.Dir(multi), "-C", filepath.Base(multi), "-f", "json", "-confined=false", "./consumer", "./pool")

	t.Run("baseline", func(t *testing.T) { baselinesAgree(t, multi) })
	t.Run("fix", func(t *testing.T) { fixesAgree(t, multi) })
	t.Run("type errors", func(t *testing.T) {
		dir := typeErrorModule(t)
		if _, code := sameAsInProcess(t, dir, "-f", "json", "./...", "./nosuchpkg"); code != exitError {
			t.Errorf("exit %d, want %d", code, exitError)
		}
	})
}

// baselinesAgree compares -baseline-write's file and -baseline-check's
// output: the baseline is taken without tests, so the test files'
// findings are new.
func baselinesAgree(t *testing.T, dir string) {
	file := filepath.Join(t.TempDir(), "baseline.json")
	write := func(env []string) string {
		os.Remove(file)
		_, stderr, code := runBinary(t, dir, env, "-test=false", "-baseline-write", file, "./...")
		data, err := os.ReadFile(file)
		if err != nil || code != exitClean {
			t.Fatalf("-baseline-write: exit %d, %v\n%s", code, err, stderr)
		}
		return stderr + string(data)
	}
	same(t, "-baseline-write", write(inProcessEnv), write(nil))
	if out, code := sameAsInProcess(t, dir, "-f", "sarif", "-baseline-check", file, "./..."); code != exitFindings || !strings.Contains(out, "consumer_test.go") {
		t.Errorf("-baseline-check: exit %d; the test files' findings are missing:\n%s", code, out)
	}
}

// fixesAgree runs -fix with each driver on the same copy of the module and
// compares what each wrote.
func fixesAgree(t *testing.T, dir string) {
	pristine := t.TempDir()
	if err := os.CopyFS(pristine, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	fix := func(env []string) (string, map[string]string) {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(dir, os.DirFS(pristine)); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runBinary(t, dir, env, "-fix", "./...")
		return stdout + stderr + string(rune('0'+code)), snapshot(t, dir)
	}
	oldOut, oldTree := fix(inProcessEnv)
	newOut, newTree := fix(nil)
	same(t, "-fix output", oldOut, newOut)
	for name, content := range oldTree {
		same(t, "-fix wrote "+name, content, newTree[name])
	}
	if !strings.Contains(newTree["consumer/consumer.go"], "//confined:control\nfunc (c *Consumer) Reset()") {
		t.Errorf("-fix did not declare Reset's role; the comparison proves nothing")
	}
}
