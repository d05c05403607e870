package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAsyncFlagResolved: a -confined.async entry is resolved against the
// loaded packages. A good one makes the API a goroutine root; one that
// names nothing fails the run with the closest match, standalone and under
// go vet, instead of matching nothing silently.
func TestAsyncFlagResolved(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs go vet")
	}
	mod := t.TempDir()
	writeFiles(t, mod, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"pool/pool.go": `package pool

type Pool struct{ tasks chan func() }

func (p *Pool) Submit(task func()) { p.tasks <- task }
`,
		"loop/loop.go": `package loop

import "example.com/m/pool"

type Loop struct {
	n int //confined:control
}

//confined:entry
func (l *Loop) run(p *pool.Pool) {
	p.Submit(func() { l.n++ })
	l.n--
}
`,
	})
	const good = "-confined.async=example.com/m/pool.(*Pool).Submit:arg0"
	out, _, code := runBinary(t, mod, nil, good, "./...")
	if code != exitFindings || !strings.Contains(out, "l.n is confined to control but written on the goroutine started by pool.Pool.Submit") {
		t.Errorf("%s: exit %d, want the closure reported:\n%s", good, code, out)
	}
	for flag, want := range map[string]string{
		"-confined.async=example.com/m/pool.(*Pool).Sumbit:arg0": "package example.com/m/pool has no method Pool.Sumbit; did you mean example.com/m/pool.(*Pool).Submit?",
		"-confined.async=example.com/m/poool.Go:arg0":            "no package example.com/m/poool is loaded (imported here); did you mean example.com/m/pool?",
		"-confined.async=example.com/m/pool.Pool.Submit:arg1":    "so it has no arg1",
	} {
		_, stderr, code := runBinary(t, mod, nil, flag, "./...")
		if code != exitError || !strings.Contains(stderr, want) {
			t.Errorf("standalone %s: exit %d, want %d and %q in:\n%s", flag, code, exitError, want, stderr)
		}
	}
	vet := exec.Command("go", "vet", "-vettool="+filepath.Clean(confinelintBinary(t)),
		"-confined.async=example.com/m/pool.(*Pool).Sumbit:arg0", "./...")
	vet.Dir = mod
	vout, err := vet.CombinedOutput()
	if err == nil || !strings.Contains(string(vout), "did you mean example.com/m/pool.(*Pool).Submit?") {
		t.Errorf("go vet with a misspelled -confined.async: err %v, want the closest match named:\n%s", err, vout)
	}
}
