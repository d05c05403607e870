// Command tsv turns `go vet -vettool=confinelint -json` output into the
// triage corpus's findings file, and summarises such files.
//
//	tsv normalize -modcache DIR [-goroot DIR] < vet.json > findings.tsv
//	tsv summary findings.tsv
//
// A findings line is module, rule, file:line and message, tab-separated. The
// file is relative to its module's root and carries no version, so that two
// runs over the same corpus diff cleanly; the message has the module cache
// prefix stripped too. A file of the standard library belongs to module
// "std", relative to GOROOT/src. normalize does not sort: run.sh sorts and
// deduplicates the concatenated output of every module.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "normalize":
		fs := flag.NewFlagSet("normalize", flag.ExitOnError)
		modcache := fs.String("modcache", "", "the module cache (go env GOMODCACHE)")
		goroot := fs.String("goroot", "", "the Go root (go env GOROOT)")
		fs.Parse(os.Args[2:])
		if *modcache == "" || fs.NArg() != 0 {
			usage()
		}
		err = normalize(os.Stdin, os.Stdout, newPathNormalizer(*modcache, *goroot))
	case "summary":
		if len(os.Args) != 3 {
			usage()
		}
		err = summary(os.Args[2], os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tsv:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: tsv normalize -modcache DIR [-goroot DIR] < vet.json | tsv summary FILE.tsv")
	os.Exit(2)
}

// diagnostic is one entry of go vet's -json output (unitchecker's format).
type diagnostic struct {
	Category string `json:"category"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
}

// normalize reads the concatenated JSON objects go vet prints (one per
// vetted package, {} when silent) and writes one line per diagnostic. An
// analyzer that failed on a package ({"error": ...}) becomes a line of rule
// ANALYZER/analysis-error, so that a crash shows up in a diff.
func normalize(r io.Reader, w io.Writer, paths *pathNormalizer) error {
	out := bufio.NewWriter(w)
	dec := json.NewDecoder(r)
	for {
		var pkgs map[string]map[string]json.RawMessage
		if err := dec.Decode(&pkgs); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("decoding go vet output: %w", err)
		}
		for pkg, analyzers := range pkgs {
			for analyzer, raw := range analyzers {
				var diags []diagnostic
				if err := json.Unmarshal(raw, &diags); err != nil {
					var failure struct{ Error string }
					if json.Unmarshal(raw, &failure) != nil || failure.Error == "" {
						return fmt.Errorf("%s: %s: unexpected result %s", pkg, analyzer, raw)
					}
					fmt.Fprintf(os.Stderr, "tsv: %s: %s failed: %s\n", pkg, analyzer, failure.Error)
					fmt.Fprintf(out, "%s\t%s/analysis-error\t%s\t%s\n", pkg, analyzer, pkg, oneLine(paths.message(failure.Error)))
					continue
				}
				for _, d := range diags {
					mod, file := paths.position(d.Posn)
					rule := analyzer + "/" + d.Category
					if d.Category == "" {
						rule = analyzer
					}
					fmt.Fprintf(out, "%s\t%s\t%s\t%s\n", mod, rule, file, oneLine(paths.message(d.Message)))
				}
			}
		}
	}
	return out.Flush()
}

func oneLine(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ").Replace(s)
}

// pathNormalizer rewrites module cache paths (DIR/escaped/path@version/rest)
// and standard library paths (GOROOT/src/rest).
type pathNormalizer struct {
	inCache *regexp.Regexp // a module cache file path, anywhere in a message
	stdSrc  string         // GOROOT/src/, or "" when not known
}

func newPathNormalizer(modcache, goroot string) *pathNormalizer {
	prefix := regexp.QuoteMeta(strings.TrimSuffix(modcache, "/") + "/")
	p := &pathNormalizer{inCache: regexp.MustCompile(prefix + `([^@\s]+)@[^/\s]+/`)}
	if goroot != "" {
		p.stdSrc = strings.TrimSuffix(goroot, "/") + "/src/"
	}
	return p
}

// position splits "DIR/mod@v/file.go:12:5" into the module path and
// "file.go:12" (the column is dropped: it is noise in a triage diff). A
// position in GOROOT/src is module "std"; any other keeps its path, with
// module "-".
func (p *pathNormalizer) position(posn string) (module, file string) {
	posn = stripColumn(posn)
	m := p.inCache.FindStringSubmatchIndex(posn)
	if m == nil || m[0] != 0 {
		if p.stdSrc != "" && strings.HasPrefix(posn, p.stdSrc) {
			return "std", posn[len(p.stdSrc):]
		}
		return "-", posn
	}
	return unescapeModule(posn[m[2]:m[3]]), posn[m[1]:]
}

// stripColumn turns file:line:col into file:line.
func stripColumn(posn string) string {
	last := strings.LastIndexByte(posn, ':')
	if last < 0 {
		return posn
	}
	if prev := strings.LastIndexByte(posn[:last], ':'); prev >= 0 && isDigits(posn[prev+1:last]) && isDigits(posn[last+1:]) {
		return posn[:last]
	}
	return posn
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// message replaces every module cache path prefix in s by the module path,
// and drops GOROOT/src/.
func (p *pathNormalizer) message(s string) string {
	s = p.inCache.ReplaceAllStringFunc(s, func(match string) string {
		sub := p.inCache.FindStringSubmatch(match)
		return unescapeModule(sub[1]) + "/"
	})
	if p.stdSrc != "" {
		s = strings.ReplaceAll(s, p.stdSrc, "")
	}
	return s
}

// unescapeModule undoes the module cache's case encoding ("!x" is "X").
func unescapeModule(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '!' && i+1 < len(s) {
			i++
			b.WriteString(strings.ToUpper(s[i : i+1]))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// summary prints a markdown table of findings per module and rule.
func summary(name string, w io.Writer) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	counts := map[string]map[string]int{} // module -> rule -> n
	rules := map[string]bool{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		f := strings.SplitN(string(line), "\t", 4)
		if len(f) != 4 {
			return fmt.Errorf("%s: malformed line %q", name, line)
		}
		if counts[f[0]] == nil {
			counts[f[0]] = map[string]int{}
		}
		counts[f[0]][f[1]]++
		rules[f[1]] = true
	}
	ruleList := sortedKeys(rules)
	moduleList := sortedKeys(counts)
	fmt.Fprintf(w, "| module | %s | total |\n|---|", strings.Join(ruleList, " | "))
	fmt.Fprint(w, strings.Repeat("---|", len(ruleList)+1), "\n")
	perRule := map[string]int{}
	total := 0
	for _, m := range moduleList {
		fmt.Fprintf(w, "| %s |", m)
		n := 0
		for _, r := range ruleList {
			c := counts[m][r]
			fmt.Fprintf(w, " %s |", count(c))
			n += c
			perRule[r] += c
		}
		fmt.Fprintf(w, " %d |\n", n)
		total += n
	}
	fmt.Fprint(w, "| total |")
	for _, r := range ruleList {
		fmt.Fprintf(w, " %d |", perRule[r])
	}
	fmt.Fprintf(w, " %d |\n", total)
	return nil
}

func count(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
