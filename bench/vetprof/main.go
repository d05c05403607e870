// Command vetprof is confinelint's vettool with profiling, for one package
// as go vet runs it:
//
//	go vet -work -x -vettool=$(command -v confinelint) PKG   # keeps $WORK/bNNN/vet.cfg
//	VETPROF_CPU=cpu.prof VETPROF_MEM=mem.prof vetprof $WORK/bNNN/vet.cfg
//
// unitchecker exits the process when it is done, so the profiles are
// written by one more analyzer that requires every confinelint analyzer and
// therefore runs last: they cover type checking, SSA, the summary and the
// reports, but not the final encoding of facts. The heap profile is taken
// there too, while every analyzer's result is still live.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/confinelint/confinelint/analyzers/confined"
	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/analyzers/revokepath"
	"github.com/confinelint/confinelint/internal/vetmem"
)

var last = &analysis.Analyzer{
	Name:     "vetprof",
	Doc:      "writes the profiles after every confinelint analyzer has run",
	Requires: []*analysis.Analyzer{confined.Analyzer, lockorder.Analyzer, revokepath.Analyzer},
	Run: func(*analysis.Pass) (any, error) {
		pprof.StopCPUProfile()
		if name := os.Getenv("VETPROF_MEM"); name != "" {
			if f, err := os.Create(name); err == nil {
				runtime.GC()
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
		return nil, nil
	},
}

func main() {
	vetmem.Lean() // as the tool does: the profile shows what it keeps
	if name := os.Getenv("VETPROF_CPU"); name != "" {
		if f, err := os.Create(name); err == nil {
			pprof.StartCPUProfile(f)
		}
	}
	unitchecker.Main(confined.Analyzer, lockorder.Analyzer, revokepath.Analyzer, last)
}
