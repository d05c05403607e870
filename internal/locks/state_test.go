package locks

import "testing"

func hold(path string, shared bool) Hold { return Hold{Path: path, Class: "c." + path, Shared: shared} }

func TestJoinMarksOneSidedHoldsMaybe(t *testing.T) {
	a := State{}.with(hold("p0.mu", false)).with(hold("p0.b", false))
	b := State{}.with(hold("p0.mu", false))
	j := join([]State{a, b}, []bool{false, true})
	mu, ok := j.find("p0.mu")
	if !ok || mu.Maybe {
		t.Fatalf("p0.mu held on both sides: got %+v, %v", mu, ok)
	}
	bh, ok := j.find("p0.b")
	if !ok || !bh.Maybe || bh.Loop {
		t.Fatalf("p0.b held on the forward edge only: got %+v", bh)
	}
	// Held only on the back-edge: a loop-carried hold.
	j = join([]State{b, a}, []bool{false, true})
	if bh, _ := j.find("p0.b"); !bh.Maybe || !bh.Loop {
		t.Fatalf("p0.b held on the back-edge only: got %+v", bh)
	}
}

func TestJoinIsCommutativeAndIdempotent(t *testing.T) {
	a := State{}.with(hold("x", false)).without("y")
	b := State{}.with(hold("y", true))
	ab := join([]State{a, b}, []bool{false, false})
	ba := join([]State{b, a}, []bool{false, false})
	if !ab.equal(ba) {
		t.Errorf("join not commutative:\n%+v\n%+v", ab, ba)
	}
	if aa := join([]State{a, a}, []bool{false, false}); !aa.equal(a) {
		t.Errorf("join not idempotent:\n%+v\n%+v", aa, a)
	}
}

func TestCopyOnWrite(t *testing.T) {
	base := State{}.with(hold("a", false))
	fork := base.with(hold("b", false)).without("a")
	if _, ok := base.find("a"); !ok {
		t.Fatal("modifying a fork changed its parent")
	}
	if _, ok := base.find("b"); ok {
		t.Fatal("a fork's hold leaked into its parent")
	}
	if !fork.wasReleased("a") || base.wasReleased("a") {
		t.Fatal("released set not copied on write")
	}
}

func TestRewrite(t *testing.T) {
	args := []string{"p1.conn", "g:pkg.mu"}
	for _, tc := range []struct{ in, want string }{
		{"p0.mu", "p1.conn.mu"},
		{"p1", "g:pkg.mu"},
		{"g:other.lock", "g:other.lock"},
		{"f0.mu", "v:t3.mu"},
	} {
		got, ok := rewrite(tc.in, args, []string{"v:t3"})
		if !ok || got != tc.want {
			t.Errorf("rewrite(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	if _, ok := rewrite("v:t9.mu", args, nil); ok {
		t.Error("a callee-local path must not be rewritten into the caller")
	}
	if _, ok := rewrite("p5.mu", args, nil); ok {
		t.Error("a parameter beyond the arguments must not be rewritten")
	}
}

func TestDeclPaths(t *testing.T) {
	for _, tc := range []struct{ decl, class, want string }{
		{"global", "pkg.mu", "g:pkg.mu"},
		{"param0.mu", "", "p0.mu"},
		{"g:pkg.T.mu", "", "g:pkg.T.mu"},
	} {
		if got := fromDeclPath(nil, tc.decl, tc.class, ""); got != tc.want {
			t.Errorf("fromDeclPath(%q) = %q, want %q", tc.decl, got, tc.want)
		}
	}
	if got := fromDeclPath(nil, "field.mu", "", "p0.inner"); got != "p0.inner.mu" {
		t.Errorf("field path = %q", got)
	}
	if got := shortClass("github.com/x/y.Broker.mu"); got != "Broker.mu" {
		t.Errorf("shortClass = %q", got)
	}
}
