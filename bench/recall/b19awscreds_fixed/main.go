// Project: aws/aws-sdk-go (aws/credentials)
// Bug: Credentials.Get held c.m (write lock) while refreshing; the refresh path
// Get -> c.refreshLocked -> c.logRefresh -> c.ExpiresAt called the exported
// ExpiresAt, which takes c.m.RLock again on the same goroutine: self-deadlock
// on the credentials RWMutex three calls below the outer Lock.
// Fix: use the unexported c.expiresAtLocked helper (caller holds c.m) on the
// refresh path; only the exported API takes the lock.

package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"
)

type Value struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	ProviderName    string
}

type Provider interface {
	Retrieve() (Value, error)
	IsExpired() bool
}

type Expirer interface {
	ExpiresAt() time.Time
}

// EC2RoleProvider approximates ec2rolecreds.EC2RoleProvider.
type EC2RoleProvider struct {
	ExpiryWindow time.Duration
	expiration   time.Time
	retrieved    int
}

func (p *EC2RoleProvider) Retrieve() (Value, error) {
	p.retrieved++
	p.expiration = time.Now().Add(15 * time.Minute).Add(-p.ExpiryWindow)
	return Value{AccessKeyID: "ASIAEXAMPLE", SecretAccessKey: "secret", SessionToken: "token",
		ProviderName: "EC2RoleProvider"}, nil
}

func (p *EC2RoleProvider) IsExpired() bool      { return time.Now().After(p.expiration) }
func (p *EC2RoleProvider) ExpiresAt() time.Time { return p.expiration }

type Credentials struct {
	creds        Value
	forceRefresh bool
	m            sync.RWMutex
	provider     Provider
	logger       *log.Logger
}

func NewCredentials(p Provider) *Credentials {
	return &Credentials{provider: p, forceRefresh: true,
		logger: log.New(os.Stdout, "[aws] ", 0)}
}

func (c *Credentials) Get() (Value, error) {
	c.m.Lock()
	defer c.m.Unlock()
	if c.isExpiredLocked() {
		if err := c.refreshLocked(); err != nil {
			return Value{}, err
		}
	}
	return c.creds, nil
}

func (c *Credentials) refreshLocked() error {
	creds, err := c.provider.Retrieve()
	if err != nil {
		return err
	}
	c.creds = creds
	c.forceRefresh = false
	c.logRefresh()
	return nil
}

func (c *Credentials) logRefresh() {
	exp, err := c.expiresAtLocked()
	if err != nil {
		c.logger.Printf("refreshed credentials from %s", c.creds.ProviderName)
		return
	}
	c.logger.Printf("refreshed credentials from %s, expire at %s",
		c.creds.ProviderName, exp.Format(time.RFC3339))
}

func (c *Credentials) Expire() {
	c.m.Lock()
	defer c.m.Unlock()
	c.forceRefresh = true
}

func (c *Credentials) IsExpired() bool {
	c.m.RLock()
	defer c.m.RUnlock()
	return c.isExpiredLocked()
}

func (c *Credentials) isExpiredLocked() bool {
	return c.forceRefresh || c.provider.IsExpired()
}

// ExpiresAt returns the expiry time of the cached credentials.
func (c *Credentials) ExpiresAt() (time.Time, error) {
	c.m.RLock()
	defer c.m.RUnlock()
	return c.expiresAtLocked()
}

func (c *Credentials) expiresAtLocked() (time.Time, error) {
	e, ok := c.provider.(Expirer)
	if !ok {
		return time.Time{}, errors.New("provider does not support ExpiresAt()")
	}
	if c.forceRefresh {
		return time.Time{}, nil
	}
	return e.ExpiresAt(), nil
}

func main() {
	creds := NewCredentials(&EC2RoleProvider{ExpiryWindow: 10 * time.Second})
	done := make(chan struct{})
	go func() {
		defer close(done)
		v, err := creds.Get()
		if err != nil {
			fmt.Println("get:", err)
			return
		}
		fmt.Println("signing with", v.AccessKeyID)
	}()
	<-done
	fmt.Println("expired:", creds.IsExpired())
}
