package main

import "sync"

// A method locking its receiver and then its argument, two objects of
// one type, orders them by argument: called at once with the two
// swapped, it deadlocks. A program that calls it once, outside any loop
// of a function that runs once, never runs it beside itself: a tracer
// linking a child span to its parent once (cockroach's addChild). Silent.
// One called from two places with the arguments the other way round is
// reported.
type traceSpan struct {
	mu       sync.Mutex
	parent   *traceSpan
	children []*traceSpan
}

func (s *traceSpan) addChild(child *traceSpan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.children = append(s.children, child)
	child.mu.Lock()
	child.parent = s
	child.mu.Unlock()
}

type ledgerAccount struct {
	mu      sync.Mutex
	balance int
}

func (a *ledgerAccount) transfer(to *ledgerAccount, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	to.mu.Lock() // want `lock order by argument: ledgerAccount.transfer holds the ledgerAccount.mu of a \(spantree.go:\d+\) and takes the ledgerAccount.mu of to: two calls at once with the arguments swapped deadlock \[lock-order\]`
	a.balance -= n
	to.balance += n
	to.mu.Unlock()
}

func runSpanTree() {
	root, child := &traceSpan{}, &traceSpan{}
	root.addChild(child)

	a, b := &ledgerAccount{balance: 10}, &ledgerAccount{balance: 10}
	done := make(chan bool)
	go func() {
		a.transfer(b, 1)
		done <- true
	}()
	b.transfer(a, 1)
	<-done
}
