// Command factsize breaks the facts of a confinelint vetx file (go vet's
// per-package file of types and facts) down by fact type and package: how many facts and how many gob bytes
// each carries. Usage: factsize FILE.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"os"
	"reflect"
	"sort"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"

	"github.com/confinelint/confinelint/facts"
)

// gobFact mirrors x/tools/internal/facts' encoding of one fact.
type gobFact struct {
	PkgPath string
	Object  string
	Fact    analysis.Fact
}

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// x/tools' unitchecker writes a 4-byte magic, the lengths of the
	// types and facts sections (uint32 LE each), types, then facts.
	if len(data) < 12 {
		fmt.Fprintln(os.Stderr, "too short")
		os.Exit(1)
	}
	typesLen := binary.LittleEndian.Uint32(data[4:8])
	factsLen := binary.LittleEndian.Uint32(data[8:12])
	fmt.Printf("types %d bytes, facts %d bytes\n", typesLen, factsLen)
	data = data[12+typesLen : 12+typesLen+factsLen]
	if len(data) == 0 {
		return
	}
	// The summary's facts, and ctrlflow's, which buildssa brings along.
	for _, f := range append(facts.All(), ctrlflow.Analyzer.FactTypes...) {
		gob.Register(f)
	}
	var all []gobFact
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&all); err != nil {
		fmt.Fprintln(os.Stderr, "decode:", err)
		os.Exit(1)
	}
	type agg struct{ n, bytes int }
	byType, byPkg := map[string]*agg{}, map[string]*agg{}
	for _, f := range all {
		var buf bytes.Buffer
		_ = gob.NewEncoder(&buf).Encode(f.Fact)
		for _, key := range []struct {
			m map[string]*agg
			k string
		}{{byType, reflect.TypeOf(f.Fact).Elem().Name()}, {byPkg, f.PkgPath}} {
			a := key.m[key.k]
			if a == nil {
				a = &agg{}
				key.m[key.k] = a
			}
			a.n++
			a.bytes += buf.Len()
		}
	}
	fmt.Printf("%d bytes, %d facts\n", len(data), len(all))
	for _, m := range []map[string]*agg{byType, byPkg} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return m[keys[i]].bytes > m[keys[j]].bytes })
		for i, k := range keys {
			if i == 12 {
				break
			}
			fmt.Printf("  %-60s %6d facts %8d bytes\n", k, m[k].n, m[k].bytes)
		}
		fmt.Println()
	}
}
