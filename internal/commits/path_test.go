package commits

import "testing"

func TestLockShortName(t *testing.T) {
	for in, want := range map[string]string{
		"example.com/a.Consumer.mu": "Consumer.mu",
		"a.Consumer.mu":             "Consumer.mu",
		"example.com/a.mu":          "mu",
	} {
		if got := lockShortName(in); got != want {
			t.Errorf("lockShortName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMeet(t *testing.T) {
	var s state
	if !meetInto(&s, state{good, entry}) || s[0] != good || s[1] != entry {
		t.Fatalf("first meet: %v", s)
	}
	if !meetInto(&s, state{bad, good}) || s[0] != bad || s[1] != entry {
		t.Fatalf("second meet: %v", s)
	}
	if meetInto(&s, state{good, good}) {
		t.Fatal("meet with a higher state changed it")
	}
	if meetInto(&s, nil) {
		t.Fatal("meet with an unreached state changed it")
	}
}
