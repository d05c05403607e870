package locks

import "testing"

func TestRepeatedField(t *testing.T) {
	for rest, want := range map[string]string{
		".parent":             "parent",
		".parent.parent":      "parent",
		".parent.parent.next": "",
		".parent.next":        "",
		"2.parent":            "",
		"":                    "",
		".a[p1]":              "",
	} {
		if got := repeatedField(rest); got != want {
			t.Errorf("repeatedField(%q) = %q, want %q", rest, got, want)
		}
	}
}
