package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestProgressSilentUnlessTerminal: progress writes nothing to a writer
// that is not a terminal, however long the run.
func TestProgressSilentUnlessTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, &options{tests: true}, []string{"./..."})
	p.unit()
	time.Sleep(10 * time.Millisecond)
	p.done()
	if buf.Len() != 0 {
		t.Errorf("progress wrote %q to a buffer", buf.String())
	}
}

// TestProgressTotal: the number of units progress expects is the number
// go vet's stream has, with and without tests.
func TestProgressTotal(t *testing.T) {
	bin := confinelintBinary(t)
	t.Chdir(multiModule(t))
	for _, mode := range []string{modeTests, modeNoTests} {
		cmd := exec.Command("go", "vet", "-vettool="+bin, "-json", "-"+standaloneFlag+"="+mode, "./...")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go vet: %v", err)
		}
		units := 0
		decodeUnits(bytes.NewReader(out), func() { units++ })
		want := strings.Count(string(out), "\n}\n")
		if got := countUnits(&options{tests: mode == modeTests}, []string{"./..."}); got != units || units != want || units < 10 {
			t.Errorf("-%s=%s: progress expects %d units, the stream has %d (%d objects)", standaloneFlag, mode, got, units, want)
		}
	}
}
