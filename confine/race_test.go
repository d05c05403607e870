//go:build race

package confine_test

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confinelint/confinelint/confine"
)

// confine is switched on by -race, so its own synchronisation must stay
// invisible to the race detector: otherwise two goroutines that only met
// inside confine's bookkeeping would look ordered, and real races between
// them would go unreported. The child process below races on purpose; the
// test passes only if the detector still sees both races.

const raceChildEnv = "CONFINE_RACE_CHILD"

func TestConfineDoesNotHideRaces(t *testing.T) {
	if os.Getenv(raceChildEnv) == "1" {
		racyOwnerScenario()
		racyLockScenario()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestConfineDoesNotHideRaces$", "-test.count=1")
	cmd.Env = append(os.Environ(), raceChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the racy child passed; output:\n%s", out)
	}
	for _, racer := range []string{"racyOwnerScenario", "racyLockScenario"} {
		if !strings.Contains(string(out), "WARNING: DATA RACE") || !strings.Contains(string(out), racer) {
			t.Errorf("no race reported in %s; output:\n%s", racer, out)
		}
	}
}

// The variables the child process races on.
var ownerRacedOn, lockRacedOn int

// racyOwnerScenario: one goroutine writes and then binds and releases an
// Owner; the other, later in time but with no synchronisation, asserts the
// Owner and writes the same variable.
func racyOwnerScenario() {
	var o confine.Owner
	runApart(func() {
		ownerRacedOn = 1
		o.Bind()
		o.Release()
	}, func() {
		o.Assert()
		ownerRacedOn = 2
	})
}

// racyLockScenario: the two goroutines guard the same variable with
// different mutexes, the classic bug -race exists to catch.
func racyLockScenario() {
	a, b := confine.NewMutex("race.A"), confine.NewMutex("race.B")
	runApart(func() {
		a.Lock()
		lockRacedOn = 1
		a.Unlock()
	}, func() {
		b.Lock()
		lockRacedOn = 2
		b.Unlock()
	})
}

// runApart runs first and then, after a pause but without synchronising
// with it, second, each on its own goroutine.
func runApart(first, second func()) {
	var wg sync.WaitGroup
	wg.Go(first)
	wg.Go(func() {
		time.Sleep(50 * time.Millisecond)
		second()
	})
	wg.Wait()
}
