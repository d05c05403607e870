package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// progress shows "packages done/total, elapsed" on stderr while go vet
// runs, once the run has taken longer than progressAfter, and only when
// stderr is a terminal; it erases the line when the run ends. Otherwise it
// does nothing, so logs and pipes stay clean.
type progress struct {
	w       io.Writer
	start   time.Time
	mu      sync.Mutex
	units   int    // units go vet has reported
	total   int    // units go vet will run, 0 until known
	drawn   string // the line on screen
	stop    chan struct{}
	stopped sync.WaitGroup
}

const progressAfter = 2 * time.Second

func newProgress(w io.Writer, o *options, patterns []string) *progress {
	p := &progress{w: w, start: time.Now()}
	if w != io.Writer(os.Stderr) || !isTerminal(os.Stderr) {
		return p
	}
	p.stop = make(chan struct{})
	p.stopped.Add(1)
	go p.run(o, patterns)
	return p
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// run redraws the line every quarter second once the run is long, and
// counts the units to expect when it first gets there.
func (p *progress) run(o *options, patterns []string) {
	defer p.stopped.Done()
	select {
	case <-p.stop:
		return
	case <-time.After(progressAfter):
	}
	go func() {
		n := countUnits(o, patterns)
		p.mu.Lock()
		p.total = n
		p.mu.Unlock()
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		p.draw()
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
	}
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	total := "?"
	if p.total > 0 {
		total = fmt.Sprint(max(p.total, p.units))
	}
	line := fmt.Sprintf("confinelint: %d/%s packages, %s", p.units, total, time.Since(p.start).Round(time.Second))
	if line != p.drawn {
		fmt.Fprintf(p.w, "\r%s\x1b[K", line)
		p.drawn = line
	}
}

// unit counts one unit of go vet's stream.
func (p *progress) unit() {
	p.mu.Lock()
	p.units++
	p.mu.Unlock()
}

// done stops the display and erases its line.
func (p *progress) done() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	p.stopped.Wait()
	if p.drawn != "" {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// countUnits counts the units go vet's stream will have: the requested
// packages (p [p.test] in place of p when p has tests: go vet builds them
// even under -test=false, when the tool ignores the test files) and
// everything they import, unsafe aside. External test packages have no
// unit under -test=false.
func countUnits(o *options, patterns []string) int {
	args := append([]string{"list", "-e", "-deps", "-test", "-f", "{{.ImportPath}}\t{{.DepOnly}}\t{{join .Imports \",\"}}"}, o.buildFlags()...)
	out, err := exec.Command("go", append(args, patterns...)...).Output()
	if err != nil {
		return 0
	}
	imports := map[string][]string{}
	var requested []string
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		fields := strings.SplitN(sc.Text(), "\t", 3)
		if len(fields) != 3 {
			continue
		}
		imports[fields[0]] = strings.Split(fields[2], ",")
		if fields[1] == "false" && !strings.HasSuffix(fields[0], ".test") {
			requested = append(requested, fields[0])
		}
	}
	seen := map[string]bool{}
	var visit func(id string)
	visit = func(id string) {
		if seen[id] || id == "" {
			return
		}
		seen[id] = true
		for _, imp := range imports[id] {
			visit(imp)
		}
	}
	for _, id := range requested {
		if _, ok := imports[id+" ["+id+".test]"]; !ok {
			visit(id) // p with tests: p [p.test] is requested instead
		}
	}
	n := 0
	for id := range seen {
		if id != "unsafe" && (o.tests || !strings.Contains(id, "_test [")) {
			n++
		}
	}
	return n
}
