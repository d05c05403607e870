// Command measure runs one benchmark command and records what it cost, and
// summarises the records into the tables of bench/RESULTS.md.
//
//	measure run -out results.jsonl -label L -tool T -round N -log FILE -- cmd args...
//	measure summary -in results.jsonl
//
// For each run it records:
//
//   - wall: elapsed time of the command.
//   - cpu: user+system time of the command and every descendant it waited
//     for (wait4's rusage; the go command waits for each vet tool).
//   - maxrss: the largest resident set of any single process in the tree
//     (wait4's ru_maxrss, which Linux propagates through waiting parents).
//     This is exactly what GNU `/usr/bin/time -v` prints as "Maximum
//     resident set size": one process, never a sum.
//   - peak: the peak of the summed resident sets of the whole process tree
//     (the go command plus every vet tool alive at that moment), sampled
//     from /proc every -every (20ms). This is the memory the machine needs
//     for the invocation. Processes that live less than a sampling interval
//     can be missed; the big ones live much longer.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Record is one measured run.
type Record struct {
	Label    string  `json:"label"`
	Tool     string  `json:"tool"`
	Round    int     `json:"round"`
	WallS    float64 `json:"wall_s"`
	CPUS     float64 `json:"cpu_s"`
	MaxRSSKB int64   `json:"maxrss_kb"`
	PeakKB   int64   `json:"peak_tree_rss_kb"`
	MaxProcs int     `json:"max_procs"`
	Procs    int     `json:"procs_seen"`
	Exit     int     `json:"exit"`
	// Others is the average number of cores busy with processes outside
	// the measured tree during the run (from /proc/stat): the machine may
	// be shared, and wall time under contention is not comparable.
	Others float64 `json:"others_cores"`
	// Top lists the processes with the largest sampled RSS: the vetted
	// package (from the vet tool's .cfg) or the command name, and MiB.
	Top   []string `json:"top,omitempty"`
	Start string   `json:"start"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: measure run|summary ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "run":
		os.Exit(runCmd(os.Args[2:]))
	case "summary":
		os.Exit(summaryCmd(os.Args[2:]))
	case "quiet":
		os.Exit(quietCmd(os.Args[2:]))
	default:
		fmt.Fprintln(os.Stderr, "usage: measure run|summary ...")
		os.Exit(2)
	}
}

func runCmd(args []string) int {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	out := fs.String("out", "", "append the JSON record to this file")
	label := fs.String("label", "", "group of runs, e.g. cold")
	tool := fs.String("tool", "", "what ran, e.g. vet, confinelint, floor")
	round := fs.Int("round", 0, "repetition number")
	logf := fs.String("log", "", "file for the command's stdout and stderr")
	every := fs.Duration("every", 20*time.Millisecond, "RSS sampling interval")
	fs.Parse(args)
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "measure run: no command")
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = nil
	if *logf != "" {
		f, err := os.Create(*logf)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	} else {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	}
	busy0 := busyCPU()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	done := make(chan struct{})
	type sample struct {
		peak            int64
		maxProcs, procs int
		top             []string
	}
	res := make(chan sample, 1)
	go func() {
		var s sample
		seen := map[int]*proc{}
		page := int64(os.Getpagesize()) / 1024
		t := time.NewTicker(*every)
		defer t.Stop()
		for {
			sum, n := treeRSS(cmd.Process.Pid, seen)
			if sum*page > s.peak {
				s.peak = sum * page
			}
			if n > s.maxProcs {
				s.maxProcs = n
			}
			select {
			case <-done:
				s.procs = len(seen)
				s.top = topProcs(seen, 5, page)
				res <- s
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	busy1 := busyCPU()
	close(done)
	s := <-res
	exit := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		exit = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, err)
		exit = -1
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := Record{
		Label: *label, Tool: *tool, Round: *round,
		WallS: wall.Seconds(), PeakKB: s.peak, MaxProcs: s.maxProcs, Procs: s.procs,
		Exit: exit, Start: start.UTC().Format(time.RFC3339), Top: s.top,
	}
	if ru != nil {
		r.CPUS = tv(ru.Utime) + tv(ru.Stime)
		r.MaxRSSKB = ru.Maxrss
	}
	if busy0 >= 0 && busy1 >= 0 {
		r.Others = (busy1 - busy0 - r.CPUS) / r.WallS
		if r.Others < 0 {
			r.Others = 0
		}
	}
	line, _ := json.Marshal(r)
	fmt.Fprintf(os.Stderr, "  %-8s %-12s #%d wall %6.1fs cpu %6.1fs peak %5d MiB maxproc %5d MiB others %.1f cores exit %d\n",
		r.Label, r.Tool, r.Round, r.WallS, r.CPUS, r.PeakKB/1024, r.MaxRSSKB/1024, r.Others, r.Exit)
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		f.Write(append(line, '\n'))
		f.Close()
	}
	return 0
}

// busyCPU returns the machine's busy CPU seconds so far (all cores), or -1.
func busyCPU() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return -1
	}
	var busy int64
	for i, x := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 7 { // guest time is already in user
			break
		}
		v, _ := strconv.ParseInt(x, 10, 64)
		busy += v
	}
	return float64(busy) / 100 // USER_HZ
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// treeRSS returns the summed resident pages of root and its descendants
// and how many there are, adding their pids to seen.
func treeRSS(root int, seen map[int]*proc) (pages int64, n int) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0
	}
	parent := map[int]int{}
	rss := map[int]int64{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... ; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 22 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		r, _ := strconv.ParseInt(f[21], 10, 64) // field 24: rss in pages
		parent[pid], rss[pid] = ppid, r
	}
	in := map[int]bool{root: true}
	for changed := true; changed; {
		changed = false
		for pid, pp := range parent {
			if !in[pid] && in[pp] {
				in[pid], changed = true, true
			}
		}
	}
	for pid := range in {
		if _, ok := rss[pid]; ok {
			pages += rss[pid]
			n++
			p := seen[pid]
			if p == nil {
				p = &proc{name: procName(pid)}
				seen[pid] = p
			}
			p.maxRSS = max(p.maxRSS, rss[pid])
		}
	}
	return pages, n
}

// quietCmd waits, at most -max, until the machine's other load over one
// second is below -below cores: on a shared machine, start timed runs when
// it is quiet. It prints what it waited for.
func quietCmd(args []string) int {
	fs := flag.NewFlagSet("quiet", flag.ExitOnError)
	maxWait := fs.Duration("max", 30*time.Second, "wait at most this long")
	below := fs.Float64("below", 0.25, "busy cores considered quiet")
	fs.Parse(args)
	start := time.Now()
	var load float64
	for {
		b0, t0 := busyCPU(), time.Now()
		time.Sleep(time.Second)
		load = (busyCPU() - b0) / time.Since(t0).Seconds()
		if load < *below || time.Since(start) >= *maxWait {
			break
		}
	}
	if w := time.Since(start); w > 2*time.Second {
		fmt.Fprintf(os.Stderr, "  (waited %.0fs for a quiet machine; other load now %.2f cores)\n", w.Seconds(), load)
	}
	return 0
}

// proc is one process of the measured tree.
type proc struct {
	name   string
	maxRSS int64 // pages
}

// procName names a process: for a vet tool, the package of its .cfg.
func procName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "?"
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	last := args[len(args)-1]
	if strings.HasSuffix(last, ".cfg") {
		if cfg, err := os.ReadFile(last); err == nil {
			var c struct {
				ID       string
				GoFiles  []string
				VetxOnly bool
			}
			if json.Unmarshal(cfg, &c) == nil && c.ID != "" {
				kind := ""
				if c.VetxOnly {
					kind = ", facts only"
				}
				return fmt.Sprintf("%s %s (%d files%s)", filepath.Base(args[0]), c.ID, len(c.GoFiles), kind)
			}
		}
	}
	return filepath.Base(args[0])
}

func topProcs(seen map[int]*proc, n int, pageKB int64) []string {
	ps := make([]*proc, 0, len(seen))
	for _, p := range seen {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].maxRSS > ps[j].maxRSS })
	var out []string
	for i, p := range ps {
		if i == n {
			break
		}
		out = append(out, fmt.Sprintf("%s %dMiB", p.name, p.maxRSS*pageKB/1024))
	}
	return out
}

// summaryCmd prints the tables.
func summaryCmd(args []string) int {
	fs := flag.NewFlagSet("summary", flag.ExitOnError)
	in := fs.String("in", "", "results.jsonl")
	fs.Parse(args)
	f, err := os.Open(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer f.Close()
	groups := map[[2]string][]Record{}
	var order [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			continue
		}
		k := [2]string{r.Label, r.Tool}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	fmt.Println("| run | tool | n | wall median (min–max) s | CPU median s | peak tree RSS median (max) MiB | max single-process RSS median (max) MiB | others' load, cores | exit codes |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	type stat struct{ wall, cpu, peak, maxrss float64 }
	med := map[[2]string]stat{}
	for _, k := range order {
		rs := groups[k]
		wall := col(rs, func(r Record) float64 { return r.WallS })
		cpu := col(rs, func(r Record) float64 { return r.CPUS })
		peak := col(rs, func(r Record) float64 { return float64(r.PeakKB) / 1024 })
		mrss := col(rs, func(r Record) float64 { return float64(r.MaxRSSKB) / 1024 })
		others := col(rs, func(r Record) float64 { return r.Others })
		exits := map[int]int{}
		for _, r := range rs {
			exits[r.Exit]++
		}
		var ex []string
		for c, n := range exits {
			ex = append(ex, fmt.Sprintf("%d×%d", n, c))
		}
		sort.Strings(ex)
		med[k] = stat{median(wall), median(cpu), median(peak), median(mrss)}
		fmt.Printf("| %s | %s | %d | %.2f (%.2f–%.2f) | %.1f | %.0f (%.0f) | %.0f (%.0f) | %.2f (max %.2f) | %s |\n",
			k[0], k[1], len(rs), median(wall), lo(wall), hi(wall), median(cpu),
			median(peak), hi(peak), median(mrss), hi(mrss), median(others), hi(others), strings.Join(ex, " "))
	}
	fmt.Println()
	// Ratios for every label that has the tools to compare.
	labels := map[string]bool{}
	for _, k := range order {
		labels[k[0]] = true
	}
	var ls []string
	for l := range labels {
		ls = append(ls, l)
	}
	sort.Strings(ls)
	printed := false
	// The tool measured, and its baselines: confinelint as go vet's tool
	// against go vet and the floor; the standalone driver against the
	// in-process driver it replaced.
	pairs := []struct {
		tool  string
		bases []string
	}{{"confinelint", []string{"vet", "floor"}}, {"standalone", []string{"inprocess"}}, {"dropdriver", []string{"inprocess"}}}
	for _, l := range ls {
		for _, pair := range pairs {
			c, okc := med[[2]string{l, pair.tool}]
			for _, base := range pair.bases {
				b, ok := med[[2]string{l, base}]
				if !ok || !okc {
					continue
				}
				if !printed {
					fmt.Println("| run | ratio (medians) | wall | CPU | peak tree RSS | max single-process RSS |")
					fmt.Println("|---|---|---|---|---|---|")
					printed = true
				}
				fmt.Printf("| %s | %s / %s | %.2f× | %.2f× | %.2f× | %.2f× |\n",
					l, pair.tool, base, c.wall/b.wall, c.cpu/b.cpu, c.peak/b.peak, c.maxrss/b.maxrss)
			}
		}
	}
	fmt.Println()
	for _, k := range order {
		var best *Record
		for i, r := range groups[k] {
			if len(r.Top) > 0 && (best == nil || r.MaxRSSKB > best.MaxRSSKB) {
				best = &groups[k][i]
			}
		}
		if best != nil && k[0] == "cold" {
			fmt.Printf("largest processes, %s %s #%d (sampled RSS): %s\n\n", k[0], k[1], best.Round, strings.Join(best.Top, "; "))
		}
	}
	return 0
}

func col(rs []Record, f func(Record) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	sort.Float64s(out)
	return out
}

func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func lo(xs []float64) float64 { return xs[0] }
func hi(xs []float64) float64 { return xs[len(xs)-1] }
