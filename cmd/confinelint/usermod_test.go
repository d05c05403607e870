package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUserModule runs confinelint, standalone and as go vet's tool, on a
// consumer written as a user would (testdata/usermod: a control loop
// started with errgroup in main and with a go statement, sync.WaitGroup.Go
// and errgroup in its tests; workers, rebalance callbacks and an HTTP
// handler that hand work to control; RWMutex-guarded caches; a shared pool
// declared with //confined:async). The correct module must be silent; with
// bugs injected, each must be reported by both drivers.
func TestUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs go vet")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	clean := copyModule(t, repo)
	out, stderr, code := runBinary(t, clean, nil, "./...")
	if code != exitClean || out != "" {
		t.Errorf("standalone on the correct module: exit %d, want 0:\n%s%s", code, out, stderr)
	}
	if vout, err := goVet(t, clean); err != nil {
		t.Errorf("go vet on the correct module: %v\n%s", err, vout)
	}

	buggy := copyModule(t, repo)
	bugs := []struct{ file, old, new, want string }{
		{"consumer/rebalance.go", "_ = c.ask(ctx, func() {\n\t\tc.flush(ctx)\n\t\tc.forget(revoked)\n\t})", "c.flush(ctx)\n\tc.forget(revoked)",
			"Consumer.commit publishes control progress but runs inline on the goroutine started by kgo.OnPartitionsRevoked: Consumer.onRevoked -> Consumer.flush -> Consumer.commit"},
		{"consumer/consumer.go", "\t\tc.mailbox <- result{rec: rec, err: err}", "\t\tc.inflight--\n\t\tc.mailbox <- result{rec: rec, err: err}",
			"c.inflight is confined to control but written on the goroutine started by sync.WaitGroup.Go: Consumer.worker -> c.inflight [foreign-access]"},
		{"consumer/consumer.go", "\t\t\tc.flush(context.WithoutCancel(ctx))\n", "\t\t\tc.commitMu.Lock()\n\t\t\tc.commit(context.WithoutCancel(ctx))\n\t\t\tc.commitMu.Unlock()\n",
			"can run without a drain of control's mailbox after Consumer.commitMu is taken: Consumer.Run -> Consumer.commit [commit-without-drain]"},
		{"consumer/status.go", "\tc.statsMu.RLock()\n\tdefer c.statsMu.RUnlock()\n\treturn c.stats", "\treturn c.stats",
			"read of Consumer.stats without holding Consumer.statsMu [guardedby]"},
		{"consumer/status.go", "\tst.Stats = c.stats\n", "\tst.Stats = c.stats\n\tc.commitMu.Lock()\n\tc.commitMu.Unlock()\n",
			"Consumer.commitMu is declared before Consumer.statsMu but is taken while Consumer.statsMu is held"},
		{"consumer/prices.go", "c.pool.Go(func() { c.prices.Replace(load()) })", "c.pool.Go(func() { c.prices.Replace(load()); c.paused = false })",
			"c.paused is confined to control but written on the goroutine started by pool.Pool.Go"},
		{"consumer/status.go", "// Snapshot returns", "// Reset forgets the in-flight count.\nfunc (c *Consumer) Reset() { c.inflight = 0 }\n\n// Snapshot returns",
			"Consumer.Reset touches control state (c.inflight written: Consumer.Reset -> c.inflight) but declares no role"},
		{"consumer/consumer.go", "\tc.owner.Assert()\n\tc.paused = true", "\tc.paused = true",
			"Consumer.Pause is //confined:control and callable from code the analysis cannot see, but never calls Assert() on its confine.Owner [missing-assert]"},
	}
	for _, b := range bugs {
		path := filepath.Join(buggy, b.file)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), b.old) {
			t.Fatalf("%s: the text to replace is not there: %q", b.file, b.old)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(src), b.old, b.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The standalone driver (go vet based) prints what the in-process
	// driver prints, byte for byte (equivalence_test.go).
	out, code = sameAsInProcess(t, buggy, "./...")
	if code != exitFindings {
		t.Errorf("standalone on the buggy module: exit %d, want %d", code, exitFindings)
	}
	sameAsInProcess(t, buggy, "-f", "sarif", "./...")
	vout, err := goVet(t, buggy)
	if err == nil {
		t.Errorf("go vet on the buggy module succeeded")
	}
	for _, b := range bugs {
		if !strings.Contains(out, b.want) {
			t.Errorf("standalone does not report %q", b.want)
		}
		if !strings.Contains(vout, b.want) {
			t.Errorf("go vet does not report %q", b.want)
		}
	}
	if t.Failed() {
		t.Logf("standalone:\n%s\ngo vet:\n%s", out, vout)
	}
}

// copyModule copies testdata/usermod to a temporary directory, with
// confinelint replaced by the repository.
func copyModule(t *testing.T, repo string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/usermod")); err != nil {
		t.Fatal(err)
	}
	replaceModule(t, dir, repo)
	return dir
}

func goVet(t *testing.T, dir string) (string, error) {
	vet := exec.Command("go", "vet", "-vettool="+confinelintBinary(t), "./...")
	vet.Dir = dir
	out, err := vet.CombinedOutput()
	return string(out), err
}
