package branches

import "sync"

// A lock taken under `a && b` and released under the same test is
// balanced, in a loop too (nats-server's sendRouteSubOrUnSubProtos locks
// each subscription's client unless it is nil or the caller itself).

type Client struct {
	mu   sync.Mutex
	name string
}

type Sub struct {
	client *Client
	alias  string
}

// names: the same compound test on both sides. Silent.
func (c *Client) names(subs []*Sub) []string {
	var out []string
	for _, s := range subs {
		if s.client != nil && s.client != c {
			s.client.mu.Lock()
		}
		out = append(out, s.client.name)
		if s.client != nil && s.client != c {
			s.client.mu.Unlock()
		}
	}
	return out
}

// nonNil: a nil test alone. Silent.
func nonNil(subs []*Sub) int {
	n := 0
	for _, s := range subs {
		if s.client != nil {
			s.client.mu.Lock()
		}
		n++
		if s.client != nil {
			s.client.mu.Unlock()
		}
	}
	return n
}

// nested: the same two tests as nested ifs. Silent.
func (c *Client) nested(subs []*Sub) {
	for _, s := range subs {
		if s.client != nil {
			if s.client != c {
				s.client.mu.Lock()
			}
		}
		c.name = s.client.name
		if s.client != nil && s.client != c {
			s.client.mu.Unlock()
		}
	}
}

// accounts tests one of the two conditions again in between. Silent.
func (c *Client) accounts(subs []*Sub) []string {
	var out []string
	for _, s := range subs {
		if s.client != nil && s.client != c {
			s.client.mu.Lock()
		}
		var name string
		if s.alias != "" {
			name = s.alias
		} else if s.client != nil && s.client.name != "" {
			name = s.client.name
		} else {
			name = "global"
		}
		if s.client != nil && s.client != c {
			s.client.mu.Unlock()
		}
		out = append(out, name)
	}
	return out
}

// namesSkipped unlocks only when the name is set too: an unnamed client
// stays locked into the next iteration.
func (c *Client) namesSkipped(subs []*Sub) []string {
	var out []string
	for _, s := range subs {
		if s.client != nil && s.client != c {
			s.client.mu.Lock() // want `Client.mu may still be held from the previous loop iteration \(taken at compound.go:\d+\): Lock on the next iteration deadlocks \[lock-leak\]`
		}
		out = append(out, s.client.name)
		if s.client != nil && s.client != c && s.client.name != "" {
			s.client.mu.Unlock()
		}
	}
	return out
}
