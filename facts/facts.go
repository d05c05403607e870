// Package facts holds the fact types confinelint carries across packages.
//
// Every type is a small pointer type with exported fields that are plain
// values, sorted slices or nested structs: no maps and no interfaces, so gob
// encodes them identically on every run (the build cache depends on it).
// Each has a String method, which is what analysistest's fact expectations
// (// want name:"...") match and what -debug=f prints.
//
// One analyzer, internal/summary, owns and exports all of them; analysis
// validation rejects a fact type owned by two analyzers.
package facts

import "golang.org/x/tools/go/analysis"

// All lists every fact type, for the summary analyzer's FactTypes.
func All() []analysis.Fact {
	return []analysis.Fact{
		new(Decl),
		new(Roles),
		new(Ownership),
		new(LockSummary),
		new(LockEdges),
		new(LockDispatches),
		new(CommitObligation),
		new(AsyncAPIs),
		new(ParamFlows),
	}
}
