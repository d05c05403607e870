package directive

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
	"unicode"
)

const (
	confinedTool   = "confined"
	confinedPrefix = "//" + confinedTool + ":"
)

// Parse parses one comment, as ast.Comment.Text holds it ("//..." or
// "/*...*/"), whose first byte is at pos. It never panics.
//
// The results combine as follows:
//   - isDirective and p == nil: d is a well-formed directive. Its Role (for
//     verbs that take one, DefaultRole when omitted), Reason and Args are
//     set; lock paths, roles and parameters are resolved later by Collect.
//   - isDirective and p != nil: the comment is written as a directive (the
//     exact //confined: prefix or a checklocks word) but is malformed; d
//     holds what was recognised (Pos, End, Spelling, and Verb if known).
//   - !isDirective and p != nil: a near miss that Go and go/doc treat as an
//     ordinary comment although it was meant as a directive
//     ("// confined:control", "//confine:entry", "+checkloks:mu").
//   - neither: an ordinary comment.
//
// Problem positions lie within [pos, pos+len(text)].
func Parse(text string, pos token.Pos) (d Directive, isDirective bool, p *Problem) {
	switch {
	case strings.HasPrefix(text, "/*"):
		return Directive{}, false, blockCommentNearMiss(text, pos)
	case !strings.HasPrefix(text, "//") || strings.Contains(text, "\n"):
		// A line comment never holds a newline; text that does is no
		// comment the scanner produced, so there is nothing to parse.
		return Directive{}, false, nil
	case strings.HasPrefix(text, confinedPrefix):
		d, p = parseConfined(text, pos)
		return d, true, p
	}
	if d, ok, p := parseCheckLocks(text, pos); ok || p != nil {
		return d, ok, p
	}
	return Directive{}, false, prefixNearMiss(text, pos)
}

// parseConfined parses a comment that starts with the exact //confined:
// prefix.
func parseConfined(text string, pos token.Pos) (Directive, *Problem) {
	d := Directive{Pos: pos, End: pos + token.Pos(len(text))}
	dir, ok := ast.ParseDirective(pos, text)
	if !ok || dir.Tool != confinedTool {
		// ParseDirective rejects a verb that does not start with [a-z0-9]
		// ("//confined:", "//confined: control", "//confined:Control").
		// Split those by hand so that they get a diagnostic, not silence.
		dir = splitDirective(text, pos, len(confinedPrefix))
	}
	dir.Args = cutTrailingComment(dir.Args)
	d.Spelling = confinedPrefix + dir.Name
	namePos := pos + token.Pos(len(confinedPrefix))
	if dir.Name == "" {
		if dir.Args != "" {
			return d, newProblem(Confined, CategoryMalformed, d.Pos, d.End,
				"no space is allowed after %s: write %s%s", confinedPrefix, confinedPrefix, dir.Args)
		}
		return d, newProblem(Confined, CategoryMalformed, d.Pos, d.End,
			"%s needs a verb: one of %s", confinedPrefix, strings.Join(confinedVerbNames(), ", "))
	}
	spec, ok := confinedVerb(dir.Name)
	if !ok {
		return d, unknownConfinedVerb(dir.Name, namePos)
	}
	d.Verb = spec.verb
	return d, parseArgs(&d, spec.args, dir)
}

// cutTrailingComment ends a directive's arguments at " //": what follows
// is an ordinary comment (an explanation, or a test's "// want"), not
// arguments. A "//" inside a word, as in a URL, does not count.
func cutTrailingComment(args string) string {
	if i := trailingComment(args); i >= 0 {
		return strings.TrimRightFunc(args[:i], unicode.IsSpace)
	}
	return args
}

// trailingComment returns the index of the "//" that starts a comment
// after a directive's arguments in s, or -1.
func trailingComment(s string) int {
	if strings.HasPrefix(s, "//") {
		return 0
	}
	for i := 1; i+1 < len(s); i++ {
		if s[i] == '/' && s[i+1] == '/' && unicode.IsSpace(rune(s[i-1])) {
			return i
		}
	}
	return -1
}

// secondDirective reports a directive written after another one in the
// same comment ("//confined:control //confined:guardedby mu"): the first
// one's arguments end at " //", so the second would be an ordinary comment
// and silently do nothing. It returns nil for an ordinary explanation.
func secondDirective(first Directive, text string, pos token.Pos) *Problem {
	if !strings.HasPrefix(text, confinedPrefix) {
		return nil
	}
	i := trailingComment(text[len(confinedPrefix):])
	if i < 0 {
		return nil
	}
	at := len(confinedPrefix) + i
	rest := text[at:]
	d, isDirective, p := Parse(rest, pos+token.Pos(at))
	if !isDirective && p == nil {
		return nil
	}
	owner, spelling := Confined, "//"+strings.TrimSpace(cutTrailingComment(rest[2:]))
	switch {
	case isDirective && d.Verb != "":
		owner = d.owner()
	case p != nil:
		owner = p.Analyzer
	}
	return newProblem(owner, CategoryMalformed, pos+token.Pos(at), pos+token.Pos(len(text)),
		"one directive per comment: %q after %s is an ordinary comment here and does nothing; put it on a line of its own (for a struct field, in the doc comment above the field)",
		spelling, first.Spelling)
}

// splitDirective splits text into a directive name, starting at byte
// nameOff, and its arguments, as ast.ParseDirective would if it accepted
// the name.
func splitDirective(text string, pos token.Pos, nameOff int) ast.Directive {
	rest := text[nameOff:]
	nameLen := strings.IndexFunc(rest, unicode.IsSpace)
	if nameLen < 0 {
		nameLen = len(rest)
	}
	args := rest[nameLen:]
	lead := len(args) - len(strings.TrimLeftFunc(args, unicode.IsSpace))
	return ast.Directive{
		Tool:    confinedTool,
		Name:    rest[:nameLen],
		Args:    strings.TrimRightFunc(args[lead:], unicode.IsSpace),
		Slash:   pos,
		ArgsPos: pos + token.Pos(nameOff+nameLen+lead),
	}
}

// unknownConfinedVerb reports a //confined: verb that is not in the
// vocabulary, suggesting the nearest verb by edit distance (never by
// prefix: "//confined:guard" is not "guardedby").
func unknownConfinedVerb(name string, namePos token.Pos) *Problem {
	nameEnd := namePos + token.Pos(len(name))
	// "//confined:guardedby:mu" is the checklocks habit of a colon before
	// the argument, not an unknown verb.
	if i := strings.IndexAny(name, ":="); i > 0 {
		if spec, ok := confinedVerb(name[:i]); ok {
			p := newProblem(spec.owner, CategoryArgs, namePos, nameEnd,
				"separate the argument from the verb with a space: %s%s %s", confinedPrefix, name[:i], name[i+1:])
			p.Fix = &Edit{Pos: namePos, End: nameEnd, Text: name[:i] + " " + name[i+1:]}
			return p
		}
	}
	msg := fmt.Sprintf("unknown directive %s%s", confinedPrefix, name)
	s := suggest(name, confinedVerbNames())
	if s != "" {
		msg += fmt.Sprintf("; did you mean %s%s?", confinedPrefix, s)
	} else {
		msg += "; the verbs are " + strings.Join(confinedVerbNames(), ", ")
	}
	p := newProblem(Confined, CategoryUnknown, namePos, nameEnd, "%s", msg)
	if s != "" {
		p.Fix = &Edit{Pos: namePos, End: nameEnd, Text: s}
	}
	return p
}

// parseArgs checks dir's arguments against the verb's shape and stores
// them in d.
func parseArgs(d *Directive, shape argShape, dir ast.Directive) *Problem {
	owner := d.owner()
	use := usage(d.Spelling, shape)
	switch shape {
	case argsReason, argsOptionalReason:
		d.Reason = dir.Args
		if shape == argsReason && d.Reason == "" {
			return newProblem(owner, CategoryIgnoreReason, d.Pos, d.End,
				"%s needs a reason: %s <why this finding does not apply>", d.Spelling, d.Spelling)
		}
		return nil
	case argsAliasPair:
		return parseAliasArgs(d, dir, use)
	}
	list, err := dir.ParseArgs()
	if err != nil {
		return newProblem(owner, CategoryArgs, dir.ArgsPos, d.End,
			"%s: unbalanced or misplaced quote in the arguments; usage: %s", d.Spelling, use)
	}
	for _, a := range list {
		d.Args = append(d.Args, Arg{Text: a.Arg, Pos: a.Pos})
	}
	argProblem := func(a Arg, format string, args ...any) *Problem {
		return newProblem(owner, CategoryArgs, a.Pos, argEnd(a, d.End), format, args...)
	}
	switch shape {
	case argsNone:
		if len(d.Args) > 0 {
			return newProblem(owner, CategoryArgs, d.Args[0].Pos, d.End, "%s takes no arguments%s", d.Spelling, explainHint(d, use))
		}
	case argsOptionalRole, argsRole:
		d.Role = DefaultRole
		switch {
		case len(d.Args) == 0 && shape == argsRole:
			return newProblem(owner, CategoryArgs, d.Pos, d.End, "%s needs a ROLE; usage: %s", d.Spelling, use)
		case len(d.Args) > 1:
			howMany := "at most one"
			if shape == argsRole {
				howMany = "exactly one"
			}
			return newProblem(owner, CategoryArgs, d.Args[1].Pos, d.End,
				"%s takes %s ROLE, got %d arguments%s", d.Spelling, howMany, len(d.Args), explainHint(d, use))
		case len(d.Args) == 1 && !isIdentifier(d.Args[0].Text):
			return argProblem(d.Args[0], "%s: ROLE %q is not an identifier", d.Spelling, d.Args[0].Text)
		case len(d.Args) == 1:
			d.Role = d.Args[0].Text
		}
	case argsAsync:
		return parseAsyncArgs(d, use)
	case argsParam:
		if len(d.Args) != 1 {
			return newProblem(owner, CategoryArgs, argsStart(d, dir), d.End,
				"%s takes exactly one PARAM, got %d arguments; usage: %s", d.Spelling, len(d.Args), use)
		}
		if !isIdentifier(d.Args[0].Text) {
			return argProblem(d.Args[0], "%s: PARAM %q is not an identifier", d.Spelling, d.Args[0].Text)
		}
	case argsLockPath:
		if len(d.Args) != 1 {
			return newProblem(owner, CategoryArgs, argsStart(d, dir), d.End,
				"%s takes exactly one lock, got %d arguments; usage: %s", d.Spelling, len(d.Args), use)
		}
		if !isLockPath(d.Args[0].Text) {
			return argProblem(d.Args[0], "%s: %q is not a lock path (dotted identifiers: mu, c.mu, pkg.mu)",
				d.Spelling, d.Args[0].Text)
		}
	}
	return nil
}

// explainHint tells a user who wrote an explanation beside a directive
// where it goes: after a second //, where it is an ordinary comment.
func explainHint(d *Directive, use string) string {
	if strings.HasPrefix(d.Spelling, "+") || len(d.Args) < 2 {
		return "" // one stray word is more likely a wrong argument than prose
	}
	words := make([]string, len(d.Args))
	for i, a := range d.Args {
		words[i] = a.Text
	}
	return fmt.Sprintf("; an explanation goes after a second //, as in %s // %s", use, strings.Join(words, " "))
}

// parseAliasArgs parses "A=B" (spaces around '=' allowed) into two
// arguments.
func parseAliasArgs(d *Directive, dir ast.Directive, use string) *Problem {
	raw := dir.Args
	eq := strings.IndexByte(raw, '=')
	if eq < 0 || strings.Count(raw, "=") != 1 {
		return newProblem(d.owner(), CategoryArgs, argsStart(d, dir), d.End,
			"%s takes two lock paths that name the same lock; usage: %s", d.Spelling, use)
	}
	left, right := raw[:eq], raw[eq+1:]
	leftOff := len(left) - len(strings.TrimLeftFunc(left, unicode.IsSpace))
	rightOff := eq + 1 + len(right) - len(strings.TrimLeftFunc(right, unicode.IsSpace))
	d.Args = []Arg{
		{Text: strings.TrimSpace(left), Pos: dir.ArgsPos + token.Pos(leftOff)},
		{Text: strings.TrimSpace(right), Pos: dir.ArgsPos + token.Pos(rightOff)},
	}
	for _, a := range d.Args {
		if !isLockPath(a.Text) {
			return newProblem(d.owner(), CategoryArgs, a.Pos, max(argEnd(a, d.End), a.Pos),
				"%s: %q is not a lock path (dotted identifiers: mu, c.mu); usage: %s", d.Spelling, a.Text, use)
		}
	}
	return nil
}

// usage renders a verb's grammar in the spelling the user chose.
func usage(spelling string, shape argShape) string {
	sep := " "
	if strings.HasPrefix(spelling, "+") {
		sep = ":" // checklocks puts the argument after a colon
	}
	switch shape {
	case argsOptionalRole:
		return spelling + " [ROLE]"
	case argsRole:
		return spelling + " ROLE"
	case argsAsync:
		return spelling + " PKG.FUNC argN"
	case argsParam:
		return spelling + sep + "PARAM"
	case argsLockPath:
		return spelling + sep + "MU"
	case argsAliasPair:
		return spelling + sep + "A=B"
	case argsReason:
		return spelling + sep + "REASON"
	case argsOptionalReason:
		return spelling + "[: REASON]"
	}
	return spelling
}

// prefixNearMiss reports a comment that was meant as a //confined:
// directive but is not one: "// confined:control" (the space makes it an
// ordinary comment), "//Confined:control", "//confine:entry". Prose is left
// alone: the word must be followed by a colon and, directly, a verb.
func prefixNearMiss(text string, pos token.Pos) *Problem {
	rest := strings.TrimLeft(text[2:], " \t")
	spaced := len(rest) != len(text)-2
	colon := strings.IndexByte(rest, ':')
	if colon <= 0 || colon+1 >= len(rest) || !isASCIILetter(rest[colon+1]) || !isASCIIWord(rest[:colon]) {
		return nil
	}
	word := strings.ToLower(rest[:colon])
	after := strings.TrimRightFunc(rest[colon+1:], unicode.IsSpace)
	verb := after
	if i := strings.IndexFunc(verb, func(r rune) bool { return unicode.IsSpace(r) || r == ':' }); i >= 0 {
		verb = verb[:i]
	}
	spec, verbKnown := confinedVerb(strings.ToLower(verb))
	owner := Confined
	if verbKnown {
		owner = spec.owner
	}
	end := pos + token.Pos(len(text))
	var p *Problem
	switch {
	case word == confinedTool && spaced:
		p = newProblem(owner, CategoryMalformed, pos, end,
			"this is an ordinary comment, not a directive: the space after // hides it from confinelint (and go doc shows it); write %s%s",
			confinedPrefix, after)
	case word == confinedTool:
		p = newProblem(owner, CategoryMalformed, pos, end,
			"directive prefixes are lowercase: write %s%s", confinedPrefix, after)
	case verbKnown && editDistance(word, confinedTool, maxSuggestDistance) <= maxSuggestDistance:
		p = newProblem(owner, CategoryMalformed, pos, end,
			"%q is not a confinelint directive; did you mean %s%s?", strings.TrimSpace(text), confinedPrefix, after)
	default:
		return nil
	}
	p.Fix = &Edit{Pos: pos, End: pos + token.Pos(len(strings.TrimRightFunc(text, unicode.IsSpace))), Text: confinedPrefix + after}
	return p
}

// blockCommentNearMiss reports /*confined:VERB*/: directives are line
// comments only, so the tool would skip it.
func blockCommentNearMiss(text string, pos token.Pos) *Problem {
	body := strings.TrimLeft(text[2:], " \t\r\n")
	const word = confinedTool + ":"
	if !strings.HasPrefix(body, word) || len(body) == len(word) || !isASCIILetter(body[len(word)]) {
		return nil
	}
	verb := body[len(word):]
	if i := strings.IndexFunc(verb, func(r rune) bool { return !isASCIIWord(string(r)) }); i >= 0 {
		verb = verb[:i]
	}
	owner := Confined
	if spec, ok := confinedVerb(verb); ok {
		owner = spec.owner
	}
	return newProblem(owner, CategoryMalformed, pos, pos+token.Pos(len(text)),
		"a block comment is never a directive: write %s%s as a // line comment", confinedPrefix, verb)
}

func newProblem(analyzer, category string, pos, end token.Pos, format string, args ...any) *Problem {
	return &Problem{Pos: pos, End: end, Analyzer: analyzer, Category: category, Message: fmt.Sprintf(format, args...)}
}

// argEnd is where a's text ends, kept inside the comment (a quoted
// argument is longer in the source than its text).
func argEnd(a Arg, commentEnd token.Pos) token.Pos {
	return min(a.Pos+token.Pos(len(a.Text)), commentEnd)
}

// argsStart is where the arguments begin, for problems about all of them.
func argsStart(d *Directive, dir ast.Directive) token.Pos {
	if dir.ArgsPos >= d.Pos && dir.ArgsPos <= d.End {
		return dir.ArgsPos
	}
	return d.Pos
}

// isIdentifier reports whether s is a Go identifier that can name
// something (the blank identifier cannot).
func isIdentifier(s string) bool {
	return s != "_" && token.IsIdentifier(s)
}

// isLockPath reports whether s is a dotted path of identifiers.
func isLockPath(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if !isIdentifier(part) {
			return false
		}
	}
	return true
}

func isASCIILetter(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// isASCIIWord reports whether s is non-empty and made of ASCII letters,
// digits and underscores.
func isASCIIWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; !isASCIILetter(b) && !('0' <= b && b <= '9') && b != '_' {
			return false
		}
	}
	return s != ""
}
