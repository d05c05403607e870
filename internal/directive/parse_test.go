package directive

import (
	"go/token"
	"slices"
	"strings"
	"testing"
)

// parseBase is an arbitrary comment position, so that tests see offsets
// added to it rather than to zero.
const parseBase token.Pos = 1000

func TestParseValid(t *testing.T) {
	tests := []struct {
		text     string
		verb     Verb
		spelling string
		args     []string
		role     string
		reason   string
	}{
		// Ownership.
		{text: "//confined:control", verb: Control, spelling: "//confined:control", role: "control"},
		{text: "//confined:control poll", verb: Control, spelling: "//confined:control", args: []string{"poll"}, role: "poll"},
		{text: "//confined:control   poll  ", verb: Control, spelling: "//confined:control", args: []string{"poll"}, role: "poll"},
		{text: "//confined:entry", verb: Entry, spelling: "//confined:entry", role: "control"},
		{text: "//confined:entry shard", verb: Entry, spelling: "//confined:entry", args: []string{"shard"}, role: "shard"},
		{text: "//confined:callback", verb: Callback, spelling: "//confined:callback"},
		{text: "//confined:spawns fn", verb: Spawns, spelling: "//confined:spawns", args: []string{"fn"}},
		{text: "//confined:any", verb: Any, spelling: "//confined:any"},
		// Locks.
		{text: "//confined:guardedby mu", verb: GuardedBy, spelling: "//confined:guardedby", args: []string{"mu"}},
		{text: "//confined:guardedby c.state.mu", verb: GuardedBy, spelling: "//confined:guardedby", args: []string{"c.state.mu"}},
		{text: "//confined:requires mu", verb: Requires, spelling: "//confined:requires", args: []string{"mu"}},
		{text: "//confined:requires_shared mu", verb: RequiresShared, spelling: "//confined:requires_shared", args: []string{"mu"}},
		{text: "//confined:acquires mu", verb: Acquires, spelling: "//confined:acquires", args: []string{"mu"}},
		{text: "//confined:acquires_shared mu", verb: AcquiresShared, spelling: "//confined:acquires_shared", args: []string{"mu"}},
		{text: "//confined:releases mu", verb: Releases, spelling: "//confined:releases", args: []string{"mu"}},
		{text: "//confined:releases_shared mu", verb: ReleasesShared, spelling: "//confined:releases_shared", args: []string{"mu"}},
		{text: "//confined:excludes pkg.mu", verb: Excludes, spelling: "//confined:excludes", args: []string{"pkg.mu"}},
		{text: "//confined:excludes_write mu", verb: ExcludesWrite, spelling: "//confined:excludes_write", args: []string{"mu"}},
		{text: "//confined:alias a.mu=b.mu", verb: Alias, spelling: "//confined:alias", args: []string{"a.mu", "b.mu"}},
		{text: "//confined:alias a.mu = b.mu", verb: Alias, spelling: "//confined:alias", args: []string{"a.mu", "b.mu"}},
		{text: "//confined:before other", verb: Before, spelling: "//confined:before", args: []string{"other"}},
		{text: "//confined:atomic", verb: Atomic, spelling: "//confined:atomic"},
		// Revocation.
		{text: "//confined:drain", verb: Drain, spelling: "//confined:drain", role: "control"},
		{text: "//confined:drain poll", verb: Drain, spelling: "//confined:drain", args: []string{"poll"}, role: "poll"},
		{text: "//confined:commit poll", verb: Commit, spelling: "//confined:commit", args: []string{"poll"}, role: "poll"},
		// Suppression.
		{text: "//confined:ignore the hook runs before Start", verb: Ignore, spelling: "//confined:ignore", reason: "the hook runs before Start"},
		{text: "//confined:ignore\tx  ", verb: Ignore, spelling: "//confined:ignore", reason: "x"},
		// checklocks compatibility, with and without the space.
		{text: "// +checklocks:mu", verb: GuardedBy, spelling: "+checklocks", args: []string{"mu"}},
		{text: "//+checklocks:mu", verb: GuardedBy, spelling: "+checklocks", args: []string{"mu"}},
		{text: "//\t+checklocks:f.mu", verb: GuardedBy, spelling: "+checklocks", args: []string{"f.mu"}},
		{text: "// +checklocksread:mu", verb: RequiresShared, spelling: "+checklocksread", args: []string{"mu"}},
		{text: "// +checklocksacquire:mu", verb: Acquires, spelling: "+checklocksacquire", args: []string{"mu"}},
		{text: "// +checklocksacquireread:mu", verb: AcquiresShared, spelling: "+checklocksacquireread", args: []string{"mu"}},
		{text: "// +checklocksrelease:mu", verb: Releases, spelling: "+checklocksrelease", args: []string{"mu"}},
		{text: "// +checklocksreleaseread:mu", verb: ReleasesShared, spelling: "+checklocksreleaseread", args: []string{"mu"}},
		{text: "// +checklocksexclude:mu", verb: Excludes, spelling: "+checklocksexclude", args: []string{"mu"}},
		{text: "// +checklocksexcludewrite:mu", verb: ExcludesWrite, spelling: "+checklocksexcludewrite", args: []string{"mu"}},
		{text: "// +checklocksalias:a.mu=b.mu", verb: Alias, spelling: "+checklocksalias", args: []string{"a.mu", "b.mu"}},
		{text: "// +checkatomic", verb: Atomic, spelling: "+checkatomic"},
		{text: "// +checkatomic\r", verb: Atomic, spelling: "+checkatomic"},
		{text: "//confined:requires mu\r", verb: Requires, spelling: "//confined:requires", args: []string{"mu"}},
		{text: "// +checklocksforce", verb: Force, spelling: "+checklocksforce"},
		{text: "// +checklocksforce: don't care about locking.", verb: Force, spelling: "+checklocksforce", reason: "don't care about locking."},
		{text: "// +checklocksignore", verb: Ignore, spelling: "+checklocksignore"},
		{text: "// +checklocksignore: mu is inferred as requisite.", verb: Ignore, spelling: "+checklocksignore", reason: "mu is inferred as requisite."},
		{text: "// +checklocksreadany", verb: ReadAny, spelling: "+checklocksreadany"},
		{text: "// +checklocksreadany // either lock serves readers", verb: ReadAny, spelling: "+checklocksreadany"},
		{text: "// +checklocks:mu // the table's lock", verb: GuardedBy, spelling: "+checklocks", args: []string{"mu"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			d, ok, p := Parse(tt.text, parseBase)
			if !ok || p != nil {
				t.Fatalf("Parse = ok %v, problem %+v; want a directive", ok, p)
			}
			if d.Verb != tt.verb || d.Spelling != tt.spelling || d.Role != tt.role || d.Reason != tt.reason {
				t.Errorf("got verb %q spelling %q role %q reason %q; want %q %q %q %q",
					d.Verb, d.Spelling, d.Role, d.Reason, tt.verb, tt.spelling, tt.role, tt.reason)
			}
			var args []string
			for _, a := range d.Args {
				args = append(args, a.Text)
				// Each argument's position points at its text.
				off := int(a.Pos - parseBase)
				if off < 0 || !strings.HasPrefix(tt.text[off:], a.Text) {
					t.Errorf("arg %q at offset %d, text there is %q", a.Text, off, tt.text[max(off, 0):])
				}
			}
			if !slices.Equal(args, tt.args) {
				t.Errorf("args = %q, want %q", args, tt.args)
			}
			if d.Pos != parseBase || d.End != parseBase+token.Pos(len(tt.text)) {
				t.Errorf("span = [%d,%d), want [%d,%d)", d.Pos, d.End, parseBase, parseBase+token.Pos(len(tt.text)))
			}
		})
	}
}

func TestParseNotDirective(t *testing.T) {
	for _, text := range []string{
		"// an ordinary comment",
		"// Confined: this field belongs to the poll loop.",
		"// confined: see below",
		"//go:generate stringer -type Verb",
		"//nolint:confined // owned by the loop",
		"//lint:ignore SA1000 reason",
		"// +build linux",
		"//go:build linux",
		"// +kubebuilder:validation:Optional",
		"// +checkescape:all",
		"// +checkalignedignore",
		"// +",
		"//",
		"/* a block comment */",
		"/* +checklocks:mu */",
		"//config:value",
		"//confirmed:yes",
		"// defined:x",
		"not a comment at all",
		"",
		"//confined:control\nmore",
	} {
		if d, ok, p := Parse(text, parseBase); ok || p != nil {
			t.Errorf("Parse(%q) = %+v, %v, %+v; want an ordinary comment", text, d, ok, p)
		}
	}
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		text        string
		isDirective bool
		analyzer    string
		category    string
		message     string // a substring of the message
	}{
		// Unknown verbs: edit-distance suggestions, never prefixes.
		{"//confined:gaurdedby mu", true, Confined, CategoryUnknown, "did you mean //confined:guardedby?"},
		{"//confined:guardedBy mu", true, Confined, CategoryUnknown, "did you mean //confined:guardedby?"},
		{"//confined:guarded_by mu", true, Confined, CategoryUnknown, "did you mean //confined:guardedby?"},
		{"//confined:requires-shared mu", true, Confined, CategoryUnknown, "did you mean //confined:requires_shared?"},
		{"//confined:Control", true, Confined, CategoryUnknown, "did you mean //confined:control?"},
		{"//confined:entyr", true, Confined, CategoryUnknown, "did you mean //confined:entry?"},
		{"//confined:guard mu", true, Confined, CategoryUnknown, "the verbs are control, entry"},
		{"//confined:x", true, Confined, CategoryUnknown, "unknown directive //confined:x;"},
		{"//confined:force", true, Confined, CategoryUnknown, "unknown directive //confined:force"},
		{"//confined:guardedby:mu", true, LockOrder, CategoryArgs, "separate the argument from the verb with a space: //confined:guardedby mu"},
		// The prefix itself.
		{"//confined:", true, Confined, CategoryMalformed, "needs a verb"},
		{"//confined: control", true, Confined, CategoryMalformed, "no space is allowed after //confined:"},
		{"// confined:control", false, Confined, CategoryMalformed, "the space after // hides it"},
		{"//   confined:guardedby mu", false, LockOrder, CategoryMalformed, "write //confined:guardedby mu"},
		{"//Confined:entry", false, Confined, CategoryMalformed, "lowercase"},
		{"//confine:control", false, Confined, CategoryMalformed, "did you mean //confined:control?"},
		{"//confned:entry", false, Confined, CategoryMalformed, "did you mean //confined:entry?"},
		{"//confinde:drain poll", false, RevokePath, CategoryMalformed, "did you mean //confined:drain poll?"},
		{"/*confined:control*/", false, Confined, CategoryMalformed, "a block comment is never a directive"},
		// Arity and shape.
		{"//confined:control a b", true, Confined, CategoryArgs, "at most one ROLE"},
		{"//confined:entry 9lives", true, Confined, CategoryArgs, "is not an identifier"},
		{"//confined:drain _", true, RevokePath, CategoryArgs, "is not an identifier"},
		{"//confined:callback now", true, Confined, CategoryArgs, "takes no arguments"},
		{"//confined:any x", true, Confined, CategoryArgs, "takes no arguments"},
		{"//confined:atomic x", true, LockOrder, CategoryArgs, "takes no arguments"},
		{"//confined:spawns", true, Confined, CategoryArgs, "exactly one PARAM"},
		{"//confined:spawns f g", true, Confined, CategoryArgs, "exactly one PARAM"},
		{"//confined:spawns f.g", true, Confined, CategoryArgs, "not an identifier"},
		{"//confined:guardedby", true, LockOrder, CategoryArgs, "exactly one lock"},
		{"//confined:requires a b", true, LockOrder, CategoryArgs, "exactly one lock"},
		{"//confined:requires c..mu", true, LockOrder, CategoryArgs, "is not a lock path"},
		{"//confined:requires c.mu.", true, LockOrder, CategoryArgs, "is not a lock path"},
		{`//confined:requires "mu`, true, LockOrder, CategoryArgs, "quote"},
		{"//confined:alias a.mu", true, LockOrder, CategoryArgs, "two lock paths"},
		{"//confined:alias a=b=c", true, LockOrder, CategoryArgs, "two lock paths"},
		{"//confined:alias a.mu=", true, LockOrder, CategoryArgs, "is not a lock path"},
		{"//confined:drain a b", true, RevokePath, CategoryArgs, "at most one ROLE"},
		// Suppression needs a reason.
		{"//confined:ignore", true, Confined, CategoryIgnoreReason, "needs a reason"},
		{"//confined:ignore   ", true, Confined, CategoryIgnoreReason, "needs a reason"},
		// checklocks: misspellings are diagnostics, not silence.
		{"// +checkloks:mu", false, LockOrder, CategoryUnknown, "did you mean +checklocks?"},
		{"// +checklocksaquire:mu", false, LockOrder, CategoryUnknown, "did you mean +checklocksacquire?"},
		{"// +checklock:mu", false, LockOrder, CategoryUnknown, "did you mean +checklocks?"},
		{"//+chcklocks:mu", false, LockOrder, CategoryUnknown, "did you mean +checklocks?"},
		{"// +CheckLocks:mu", false, LockOrder, CategoryUnknown, "did you mean +checklocks?"},
		{"// +checkatomics", false, LockOrder, CategoryUnknown, "did you mean +checkatomic?"},
		{"// +checklocksacquirewrite:mu", false, LockOrder, CategoryUnknown, "the annotations are +checklocks"},
		{"// +checklocksfail", false, LockOrder, CategoryUnknown, "test marker"},
		{"// +checklocks:ignore", true, LockOrder, CategoryUnknown, "did you mean +checklocksignore?"},
		{"// +checklocks", true, LockOrder, CategoryArgs, "usage: +checklocks:MU"},
		{"// +checklocks mu", true, LockOrder, CategoryArgs, "after a colon: +checklocks:mu"},
		{"// +checklocks:a b", true, LockOrder, CategoryArgs, "exactly one lock"},
		{"// +checkatomic:mu", true, LockOrder, CategoryArgs, "takes no arguments"},
		{"// +checklocksreadany:mu", true, LockOrder, CategoryArgs, "takes no arguments"},
		{"// +checklocksreadanny", false, LockOrder, CategoryUnknown, "did you mean +checklocksreadany?"},
		{"//confined:readany", true, Confined, CategoryUnknown, "unknown directive //confined:readany"},
		{"// +checklocksalias:mu", true, LockOrder, CategoryArgs, "usage: +checklocksalias:A=B"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			_, ok, p := Parse(tt.text, parseBase)
			if p == nil {
				t.Fatalf("no problem; want %s %q", tt.category, tt.message)
			}
			if ok != tt.isDirective || p.Analyzer != tt.analyzer || p.Category != tt.category || !strings.Contains(p.Message, tt.message) {
				t.Errorf("got isDirective %v, %s/%s %q; want %v, %s/%s containing %q",
					ok, p.Analyzer, p.Category, p.Message, tt.isDirective, tt.analyzer, tt.category, tt.message)
			}
			if p.Pos < parseBase || p.End < p.Pos || p.End > parseBase+token.Pos(len(tt.text)) {
				t.Errorf("problem span [%d,%d) outside the comment [%d,%d)", p.Pos, p.End, parseBase, parseBase+token.Pos(len(tt.text)))
			}
		})
	}
}

// The problem for an unknown verb points at the verb, not the comment.
func TestParseUnknownVerbPosition(t *testing.T) {
	text := "//confined:gaurdedby mu"
	_, _, p := Parse(text, parseBase)
	if p == nil {
		t.Fatal("no problem")
	}
	if got, want := text[p.Pos-parseBase:p.End-parseBase], "gaurdedby"; got != want {
		t.Errorf("problem covers %q, want %q", got, want)
	}
}

func TestVerbTable(t *testing.T) {
	for _, spec := range vocabulary {
		if spec.owner != Confined && spec.owner != LockOrder && spec.owner != RevokePath {
			t.Errorf("%s: owner %q", spec.verb, spec.owner)
		}
		if spec.places == 0 {
			t.Errorf("%s: no placement", spec.verb)
		}
		if !spec.verb.Known() || spec.verb.Analyzer() != spec.owner {
			t.Errorf("%s: Known/Analyzer disagree with the table", spec.verb)
		}
	}
	for _, w := range checklocksWords {
		if !w.verb.Known() {
			t.Errorf("+%s maps to unknown verb %q", w.word, w.verb)
		}
	}
	if Verb("guard").Known() || Verb("guard").Analyzer() != "" {
		t.Error("unknown verb reported known")
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"mu", "mu", 0},
		{"gaurdedby", "guardedby", 1}, // transposition
		{"guardedby", "guardedb", 1},
		{"guard", "guardedby", 3}, // capped at limit+1
		{"checkloks", "checklocks", 1},
		{"requries", "requires", 1},
		{"abc", "xyz", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b, 2); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	if got := suggest("x", confinedVerbNames()); got != "" {
		t.Errorf("suggest(x) = %q; a single letter should suggest nothing", got)
	}
	if got := suggest("guard", confinedVerbNames()); got != "" {
		t.Errorf("suggest(guard) = %q; prefixes must not match", got)
	}
}

func TestParseTrailingComment(t *testing.T) {
	for text, want := range map[string]string{
		"//confined:guardedby mu // protects count": "mu",
		"//confined:control poll // want `x`":       "poll",
		"//confined:entry // the control loop":      "",
	} {
		d, ok, p := Parse(text, 1)
		if !ok || p != nil {
			t.Errorf("Parse(%q): ok=%v problem=%v", text, ok, p)
			continue
		}
		got := ""
		if len(d.Args) > 0 {
			got = d.Args[0].Text
		}
		if got != want || len(d.Args) > 1 {
			t.Errorf("Parse(%q) args = %v, want [%s]", text, d.Args, want)
		}
	}
	d, _, p := Parse("//confined:ignore see https://example.com/x // want `y`", 1)
	if p != nil || d.Reason != "see https://example.com/x" {
		t.Errorf("ignore reason = %q, problem %v; want the URL kept and the trailing comment cut", d.Reason, p)
	}
}
