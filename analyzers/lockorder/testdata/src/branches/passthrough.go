package branches

import "sync"

// A wrapper hands its flags on to the function that branches on them
// (nats-server's pubAllowedFullCheck -> pubAllowedWithResp): a caller's
// constants decide the inner branch as if it called that function itself.

type RouteClient struct {
	mu   sync.Mutex
	resp map[string]bool
}

type RouteAccount struct {
	mu      sync.Mutex
	clients []*RouteClient
}

func (c *RouteClient) allowedWithResp(subject string, fullCheck, hasLock bool) bool {
	if fullCheck && c.resp != nil {
		if !hasLock {
			c.mu.Lock()
		}
		ok := c.resp[subject]
		if !hasLock {
			c.mu.Unlock()
		}
		return ok
	}
	return true
}

func (c *RouteClient) allowedFullCheck(subject string, fullCheck, hasLock bool) bool {
	return c.allowedWithResp(subject, fullCheck, hasLock)
}

// canImport never locks: the client lock is held on entry, and no full
// check is asked for.
func (c *RouteClient) canImport(subject string) bool {
	return c.allowedFullCheck(subject, false, true)
}

// RouteAccount.mu then a client's canImport: no RouteClient.mu. Silent, against
// attach's RouteClient.mu -> RouteAccount.mu below.
func (a *RouteAccount) sendSubs(subject string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.clients {
		if c.canImport(subject) {
			n++
		}
	}
	return n
}

func (c *RouteClient) attach(a *RouteAccount) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a.mu.Lock()
	a.clients = append(a.clients, c)
	a.mu.Unlock()
}

// A full check for a client that does not hold its lock, made under the
// account's lock, takes Account.mu -> Client.mu through the wrapper: with
// attach's order, an inversion.
func (a *RouteAccount) recheckAll(subject string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.clients {
		if c.allowedFullCheck(subject, true, false) { // want `lock order inversion: RouteClient.mu then RouteAccount.mu in RouteClient.attach .* but RouteAccount.mu then RouteClient.mu in RouteAccount.recheckAll .* via RouteClient.allowedFullCheck -> RouteClient.allowedWithResp\) \[lock-order\]`
			n++
		}
	}
	return n
}
