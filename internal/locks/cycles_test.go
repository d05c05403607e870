package locks

import (
	"go/token"
	"testing"
)

// Two cycles closed at one call under one lock (cc.mu held, a balancer
// reached that takes two other locks) tie on count and positions; the
// group reported first must not depend on map iteration.
func TestMostSharedTieIsDeterministic(t *testing.T) {
	site := func(to string) edge {
		return edge{From: "p.ClientConn.mu", To: to, Fn: "ClientConn.update", FromPos: token.Pos(5), ToPos: token.Pos(10)}
	}
	back := func(from string) edge {
		return edge{From: from, To: "p.ClientConn.mu", Fn: "Wrapper.close", FromPos: token.Pos(20), ToPos: token.Pos(1)}
	}
	cycles := []cycle{
		{edges: []edge{site("p.Wrapper.balancerMu"), back("p.Wrapper.balancerMu")}},
		{edges: []edge{site("p.Wrapper.mu"), back("p.Wrapper.mu")}},
	}
	e := &engine{}
	first, ok := e.mostShared(cycles, false)
	if !ok {
		t.Fatal("no edge picked")
	}
	for range 200 {
		if got, _ := e.mostShared(cycles, false); got.key() != first.key() || got.Fn != first.Fn {
			t.Fatalf("mostShared picked %s -> %s, earlier %s -> %s", got.From, got.To, first.From, first.To)
		}
	}
}
