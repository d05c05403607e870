// Package checklocks_alias: an alias the nested types' aliases already
// imply is redundant.
package checklocks_alias

import "sync"

type link struct {
	mu *sync.Mutex
}

// +checklocksalias:l.mu=mu
type node struct {
	mu sync.Mutex
	l  link
}

/* want `\+checklocksalias:n.l.mu=n.mu is redundant: the aliases of the types it goes through already make the two paths one lock \[directive-conflict\]` */ // +checklocksalias:n.l.mu=n.mu
type wrapped struct {
	n node
}

type endpoint struct{ mu sync.Mutex }

type sender struct{ ep *endpoint }

// +checklocksalias:snd.ep.mu=ep.mu
type receiver struct {
	ep  *endpoint
	snd sender
}

/* want `\+checklocksalias:r.snd.ep.mu=r.ep.mu is redundant` */ // +checklocksalias:r.snd.ep.mu=r.ep.mu
type deep struct {
	r receiver
}

// Not redundant: the nested type declares nothing about these paths.
// +checklocksalias:s.ep.mu=e.mu
type pairing struct {
	e *endpoint
	s sender
}
