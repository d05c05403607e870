// Package suggest defines an Analyzer that proposes confinelint annotations for unannotated code, with the evidence and a fix that adds them.
//
// # Analyzer suggest
//
// suggest: proposes confinelint annotations for unannotated code, with the evidence and a fix that adds them.
//
// Code without annotations gets no finding from confined or lockorder's
// guardedby check, which is easy to read as "safe". suggest infers the
// annotations the code's own majority behaviour implies and reports each
// as a suggestion (never an error) whose suggested fix inserts the
// directive, with the evidence as counts of sites and its rank among the
// package's suggestions. The sites that break the majority are listed as
// related information: they are what confined and lockorder report once
// the annotations are in (confinelint -suggest -fix, then confinelint).
//
// It is off by default: `confinelint -suggest ./...` runs it instead of the
// checks, and `go vet -vettool=$(command -v confinelint) -suggest ./...`
// does the same under go vet. Suggestions, by category:
//
//   - suggest-guardedby: //confined:guardedby MU on a field or package var
//     accessed with MU held at nearly every site (at least two sites, three
//     quarters of them, one write among them); the sites without MU are
//     the likely races.
//   - suggest-control: //confined:control [ROLE] on a field most of whose
//     writes run on one goroutine loop's goroutine and that other roots
//     touch; their accesses would then be foreign.
//   - suggest-entry: //confined:entry [ROLE] on that loop: a function
//     started by a go statement (or exported, its callers starting it)
//     that loops receiving from a channel, and owns such fields.
//   - suggest-spawns: //confined:spawns PARAM on a function whose
//     func-typed parameter reaches another goroutine (a go statement, an
//     asynchronous API, or a channel or field whose values a goroutine
//     calls: a worker pool's Submit, a callback registry).
//   - suggest-drain, suggest-commit: on functions of an entry's goroutine,
//     a loop over a non-blocking receive (drain), and a function that
//     reads owned state and calls another package's Commit* or Mark*
//     method (commit).
//
// Ranking: a z score of the agreeing sites against chance, so that 19 of
// 20 outranks 2 of 2. See internal/infer for the inference.
package suggest
