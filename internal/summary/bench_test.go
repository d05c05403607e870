package summary_test

// Micro-benchmarks of the summary analyzer (directives, goroutine roots and
// the ownership, lock and commit engines) on generated packages of growing
// size, call depth and lock count. bench/run.sh runs them; by hand:
//
//	go test -run '^$' -bench . -benchmem ./internal/summary/
//
// BenchmarkSummary times the summary's Run alone, on SSA built once;
// BenchmarkSSA times what the floor vettool does per package (ctrlflow and
// buildssa); BenchmarkSSAAndSummary both, i.e. confinelint's per-package
// cost after type checking. Each reports ns/func, which stays flat as the
// package grows if the cost is linear in its size.

import (
	"testing"

	"golang.org/x/tools/go/analysis/passes/buildssa"

	"github.com/confinelint/confinelint/internal/summary"
)

// benchShapes grow one dimension at a time from funcs=200, depth=8,
// locks=8.
var benchShapes = []genShape{
	{Funcs: 50, Depth: 8, Locks: 8},
	{Funcs: 200, Depth: 8, Locks: 8},
	{Funcs: 800, Depth: 8, Locks: 8},
	{Funcs: 200, Depth: 2, Locks: 8},
	{Funcs: 200, Depth: 64, Locks: 8},
	{Funcs: 200, Depth: 8, Locks: 1},
	{Funcs: 200, Depth: 8, Locks: 32},
}

func BenchmarkSummary(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.String(), func(b *testing.B) {
			pkg := loadGen(b, s)
			ssa := newUnit(pkg).run(b, buildssa.Analyzer)
			for b.Loop() {
				newUnit(pkg).with(buildssa.Analyzer, ssa).run(b, summary.Analyzer)
			}
			perFunc(b, s)
		})
	}
}

func BenchmarkSSA(b *testing.B) {
	for _, s := range benchShapes[:3] {
		b.Run(s.String(), func(b *testing.B) {
			pkg := loadGen(b, s)
			for b.Loop() {
				newUnit(pkg).run(b, buildssa.Analyzer)
			}
			perFunc(b, s)
		})
	}
}

func BenchmarkSSAAndSummary(b *testing.B) {
	for _, s := range benchShapes[:3] {
		b.Run(s.String(), func(b *testing.B) {
			pkg := loadGen(b, s)
			for b.Loop() {
				newUnit(pkg).run(b, summary.Analyzer)
			}
			perFunc(b, s)
		})
	}
}

// perFunc reports the time per generated function.
func perFunc(b *testing.B, s genShape) {
	if b.N > 0 && b.Elapsed() > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.Funcs), "ns/func")
	}
}
