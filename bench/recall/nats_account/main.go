// Project: nats-io/nats-server (client / Account), as remembered.
// Bug: lock ordering between client.mu and Account.mu. processSub holds the
// client lock and registers the subscription with its account (acc.mu).
// When an account's JWT expires, the expiration timer callback takes acc.mu
// and, while iterating the account's clients, tells each one its auth
// expired, which takes c.mu. Client->Account vs Account->Client: AB-BA.
// Fix (in nats-server): collect the clients under acc.mu, release, then
// notify them.
package main

import (
	"fmt"
	"sync"
	"time"
)

type subscription struct {
	client  *client
	subject string
}

type Account struct {
	mu       sync.RWMutex
	Name     string
	clients  map[*client]struct{}
	subs     map[string][]*subscription
	expired  bool
	etmr     *time.Timer
	onExpire func()
}

func NewAccount(name string, ttl time.Duration) *Account {
	a := &Account{Name: name, clients: make(map[*client]struct{}), subs: make(map[string][]*subscription)}
	a.onExpire = a.expiredTimeout
	a.etmr = time.AfterFunc(ttl, a.onExpire)
	return a
}

func (a *Account) addClient(c *client) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clients[c] = struct{}{}
}

func (a *Account) addSubscription(sub *subscription) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.subs[sub.subject] = append(a.subs[sub.subject], sub)
}

func (a *Account) expiredTimeout() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expired = true
	for c := range a.clients {
		c.accountAuthExpired()
	}
}

type client struct {
	mu     sync.Mutex
	cid    uint64
	acc    *Account
	subs   map[string]*subscription
	closed bool
}

func (c *client) processSub(subject string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	sub := &subscription{client: c, subject: subject}
	c.subs[subject] = sub
	if acc := c.acc; acc != nil {
		acc.addSubscription(sub)
	}
}

func (c *client) accountAuthExpired() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

func main() {
	acc := NewAccount("ACME", 5*time.Millisecond)
	for i := 0; i < 4; i++ {
		c := &client{cid: uint64(i), acc: acc, subs: make(map[string]*subscription)}
		acc.addClient(c)
		go func() {
			for j := 0; ; j++ {
				c.processSub(fmt.Sprintf("orders.%d", j))
			}
		}()
	}
	time.Sleep(time.Second)
}
