package directive

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
	"unicode"
)

// checklocksWords maps each gVisor checklocks annotation word to its
// equivalent verb. The lookup is exact: checklocks itself matches prefixes,
// so "+checklocksaquire:mu" passes there as "+checklocks" with a garbled
// argument; here it is an unknown word with a suggestion.
var checklocksWords = []struct {
	word string
	verb Verb
}{
	// On a field "+checklocks" is guardedby; Collect turns it into
	// requires on a func, where checklocks reads it that way.
	{"checklocks", GuardedBy},
	{"checklocksread", RequiresShared},
	{"checklocksacquire", Acquires},
	{"checklocksacquireread", AcquiresShared},
	{"checklocksrelease", Releases},
	{"checklocksreleaseread", ReleasesShared},
	{"checklocksexclude", Excludes},
	{"checklocksexcludewrite", ExcludesWrite},
	{"checklocksalias", Alias},
	{"checkatomic", Atomic},
	{"checklocksforce", Force},
	{"checklocksignore", Ignore},
	{"checklocksreadany", ReadAny},
}

// checklocksNotes explain checklocks words that are real but have no
// equivalent, instead of a bare "unknown".
var checklocksNotes = map[string]string{
	"checklocksfail": "+checklocksfail is a checklocks test marker; confinelint's tests use analysistest // want comments",
}

func checklocksWordNames() []string {
	names := make([]string, len(checklocksWords))
	for i, w := range checklocksWords {
		names[i] = w.word
	}
	return names
}

// parseCheckLocks parses "// +WORD[:ARG]" (any spaces or none after the
// slashes, as gVisor and gofmt'd code write it). The result is as for
// Parse; ok is false when the comment is no checklocks annotation at all.
func parseCheckLocks(text string, pos token.Pos) (d Directive, ok bool, p *Problem) {
	plus := 2
	for plus < len(text) && isSpaceByte(text[plus]) {
		plus++
	}
	if plus >= len(text) || text[plus] != '+' {
		return Directive{}, false, nil
	}
	wordEnd := plus + 1
	for wordEnd < len(text) && text[wordEnd] != ':' && !isSpaceByte(text[wordEnd]) {
		wordEnd++
	}
	word := text[plus+1 : wordEnd]
	wordPos, wordEndPos := pos+token.Pos(plus), pos+token.Pos(wordEnd)
	verb, known := checklocksVerb(word)
	if !known {
		if !looksLikeCheckLocks(word) {
			return Directive{}, false, nil // "+build", "+k8s:...": someone else's
		}
		return Directive{}, false, unknownCheckLocks(word, wordPos, wordEndPos)
	}

	d = Directive{Verb: verb, Pos: pos, End: pos + token.Pos(len(text)), Spelling: "+" + word}
	spec, _ := specOf(verb)
	shape := spec.args
	if verb == Ignore {
		shape = argsOptionalReason // unlike //confined:ignore, no reason needed
	}
	argStart := wordEnd
	hasColon := argStart < len(text) && text[argStart] == ':'
	if hasColon {
		argStart++
	}
	args := cutTrailingComment(text[argStart:]) // as for //confined: (a "// want", an explanation)
	lead := len(args) - len(strings.TrimLeftFunc(args, unicode.IsSpace))
	dir := ast.Directive{
		Tool:    "checklocks",
		Name:    word,
		Args:    strings.TrimSpace(args),
		Slash:   pos,
		ArgsPos: pos + token.Pos(argStart+lead),
	}
	if !hasColon && dir.Args != "" && (shape == argsLockPath || shape == argsAliasPair) {
		return d, true, newProblem(LockOrder, CategoryArgs, wordPos, d.End,
			"%s takes its argument after a colon: %s:%s", d.Spelling, d.Spelling, dir.Args)
	}
	if verb == GuardedBy && dir.Args == "ignore" {
		// The form older checklocks documentation showed; today it would
		// name a lock called "ignore".
		return d, true, newProblem(LockOrder, CategoryUnknown, wordPos, d.End,
			"+checklocks:ignore is an old spelling; did you mean +checklocksignore?")
	}
	return d, true, parseArgs(&d, shape, dir)
}

func checklocksVerb(word string) (Verb, bool) {
	for _, w := range checklocksWords {
		if w.word == word {
			return w.verb, true
		}
	}
	return "", false
}

// looksLikeCheckLocks reports whether an unknown +word was meant as a
// checklocks annotation: it starts like one ("+checklock...",
// "+checkatomic...") or is a couple of edits from one ("+chcklocks").
// gVisor's other tools' words ("+checkescape", "+checkalignedignore",
// "+checkconst") are neither, and are left alone.
func looksLikeCheckLocks(word string) bool {
	lw := strings.ToLower(word)
	return strings.HasPrefix(lw, "checklock") || strings.HasPrefix(lw, "checkatomic") ||
		suggest(word, checklocksWordNames()) != ""
}

func unknownCheckLocks(word string, pos, end token.Pos) *Problem {
	if note, ok := checklocksNotes[word]; ok {
		return newProblem(LockOrder, CategoryUnknown, pos, end, "%s", note)
	}
	msg := fmt.Sprintf("unknown checklocks annotation +%s", word)
	if s := suggest(word, checklocksWordNames()); s != "" {
		msg += fmt.Sprintf("; did you mean +%s?", s)
	} else {
		msg += "; the annotations are +" + strings.Join(checklocksWordNames(), ", +")
	}
	return newProblem(LockOrder, CategoryUnknown, pos, end, "%s", msg)
}

// isSpaceByte reports ASCII white space; a comment from a CRLF file may
// end in '\r'.
func isSpaceByte(b byte) bool {
	switch b {
	case ' ', '\t', '\r', '\n', '\v', '\f':
		return true
	}
	return false
}
