package checklocks_identity

// A local variable is what was last stored into it on every path to its
// use: a struct variable holds the fields of the value copied into it
// when it was copied, and a variable assigned by a closure run in place
// holds what the closure stored. Where the stores do not decide (a
// conditional assignment, an assignment after the copy), the variable is
// not the lock's object and the access is reported.

type link struct {
	ep *Endpoint
}

// +checklocks:e.mu
func touch(e *Endpoint) { e.state++ }

func structLiteralField(e *Endpoint) {
	e.mu.Lock()
	l := link{ep: e}
	touch(l.ep)
	e.mu.Unlock()
}

func copiedBeforeReassigned(first, second *Endpoint) {
	src := link{ep: first}
	cp := src
	src.ep = second
	first.mu.Lock()
	touch(cp.ep)
	touch(src.ep) // want `call to touch requires Endpoint.mu held exclusively, but it is not held here \[requires\]`
	first.mu.Unlock()
}

func conditionalCopy(first, second *Endpoint, cond bool) {
	l := link{ep: first}
	saved := l
	if cond {
		l = link{ep: second}
	}
	first.mu.Lock()
	touch(saved.ep)
	touch(l.ep) // want `call to touch requires Endpoint.mu held exclusively, but it is not held here \[requires\]`
	first.mu.Unlock()
}

func assignedInPlace(e, other *Endpoint) {
	p := e
	func() {
		p = other
	}()
	other.mu.Lock()
	p.state++
	other.mu.Unlock()
	e.mu.Lock()
	p.state++ // want `write to Endpoint.state without holding Endpoint.mu \[guardedby\]`
	e.mu.Unlock()
}

func readBeforeAssigned(e, other *Endpoint) {
	p := e
	saved := p
	func(dst **Endpoint) {
		*dst = other
	}(&p)
	e.mu.Lock()
	saved.state++
	p.state++ // want `write to Endpoint.state without holding Endpoint.mu \[guardedby\]`
	e.mu.Unlock()
}

func assignedConditionally(e, other *Endpoint, cond bool) {
	p := e
	func() {
		if cond {
			p = other
		}
	}()
	e.mu.Lock()
	p.state++ // want `write to Endpoint.state without holding Endpoint.mu \[guardedby\]`
	e.mu.Unlock()
}

func relink(l *link, e *Endpoint) { l.ep = e }

// A struct variable whose address is given to a call may be stored into
// there: what it holds is not known.
func copiedThenPassed(first, second *Endpoint) {
	src := link{ep: first}
	l := src
	relink(&l, second)
	first.mu.Lock()
	touch(l.ep) // want `call to touch requires Endpoint.mu held exclusively, but it is not held here \[requires\]`
	first.mu.Unlock()
}

// A load through a pointer parameter is the object the pointer held on
// entry only until something stores through the pointer: directly, or in
// a closure run in place. After the store it is the stored value when
// that store decides, and otherwise not known.
func storedThroughParam(dst **Endpoint, other *Endpoint, cond bool) {
	saved := *dst
	saved.mu.Lock()
	if cond {
		*dst = other
	}
	(*dst).state++ // want `write to Endpoint.state without holding Endpoint.mu \[guardedby\]`
	saved.state++
	saved.mu.Unlock()
}

func storedThroughParamInPlace(dst **Endpoint, other *Endpoint, cond bool) {
	saved := *dst
	saved.mu.Lock()
	func() {
		if cond {
			*dst = other
		}
	}()
	(*dst).state++ // want `write to Endpoint.state without holding Endpoint.mu \[guardedby\]`
	saved.mu.Unlock()
}

func storedThenLocked(dst **Endpoint, other *Endpoint, cond bool) {
	if cond {
		*dst = other
	}
	(*dst).mu.Lock()
	(*dst).state++
	(*dst).mu.Unlock()
	*dst = other
	other.mu.Lock()
	(*dst).state++
	other.mu.Unlock()
}

func notStoredThrough(dst **Endpoint) {
	saved := *dst
	saved.mu.Lock()
	(*dst).state++
	saved.mu.Unlock()
}

// Captured, the pointer is read from its cell at each use: the loads
// after the same stores are still one object.
func storedThenLockedCaptured(dst **Endpoint, other *Endpoint, cond bool) {
	func() {
		if cond {
			*dst = other
		}
	}()
	(*dst).mu.Lock()
	(*dst).state++
	(*dst).mu.Unlock()
}
