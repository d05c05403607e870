// Project: hashicorp/vault (api/client.go Client.clone, Client.Headers, Client.SetCloneToken), api module v1.9 era, fixed August 2023.
// Bug: Client.clone read-locks c.modifyLock (and c.config.modifyLock) and, when headers are cloned, calls the exported
// Client.Headers, which read-locks c.modifyLock again; if another goroutine calls a setter such as SetCloneToken, whose
// write lock queues between the two read locks, CloneWithHeaders and the setter wait on each other forever
// (issue #22393, fixed by PR #22410, which makes clone use headersInternal with the lock already held).
package main

import (
	"fmt"
	"net/url"
	"sync"
	"time"
)

type Header map[string][]string

func (h Header) Clone() Header {
	if h == nil {
		return nil
	}
	out := make(Header, len(h))
	for k, v := range h {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// Config is used to configure the creation of the client.
type Config struct {
	modifyLock sync.RWMutex

	Address      string
	MaxRetries   int
	Timeout      time.Duration
	CloneHeaders bool
	CloneToken   bool
}

func DefaultConfig() *Config {
	return &Config{Address: "https://127.0.0.1:8200", MaxRetries: 2, Timeout: 60 * time.Second}
}

// Client is the client to the Vault API. Create a client with NewClient.
type Client struct {
	modifyLock sync.RWMutex
	addr       *url.URL
	config     *Config
	token      string
	headers    Header
	namespace  string
}

func NewClient(c *Config) (*Client, error) {
	if c == nil {
		c = DefaultConfig()
	}
	// NewClient reads VAULT_* environment variables, builds the TLS
	// transport and parses the address, which takes a moment.
	time.Sleep(100 * time.Millisecond)
	u, err := url.Parse(c.Address)
	if err != nil {
		return nil, err
	}
	return &Client{addr: u, config: c}, nil
}

// Headers gets the current set of headers used for requests. This returns a
// copy; to modify it call AddHeader or SetHeaders.
func (c *Client) Headers() Header {
	c.modifyLock.RLock()
	defer c.modifyLock.RUnlock()

	if c.headers == nil {
		return nil
	}
	ret := make(Header)
	for k, v := range c.headers {
		ret[k] = append(ret[k], v...)
	}
	return ret
}

// SetHeaders clears all previous headers and uses only the given ones going forward.
func (c *Client) SetHeaders(headers Header) {
	c.modifyLock.Lock()
	defer c.modifyLock.Unlock()
	c.headers = headers
}

// SetNamespace sets the namespace supplied either via the environment
// variable or via the command line.
func (c *Client) SetNamespace(namespace string) {
	c.modifyLock.Lock()
	defer c.modifyLock.Unlock()
	if c.headers == nil {
		c.headers = make(Header)
	}
	c.headers["X-Vault-Namespace"] = []string{namespace}
	c.namespace = namespace
}

// SetToken sets the token directly. This won't perform any auth
// verification, it simply sets the token properly for future requests.
func (c *Client) SetToken(v string) {
	c.modifyLock.Lock()
	defer c.modifyLock.Unlock()
	c.token = v
}

// SetCloneToken from parent
func (c *Client) SetCloneToken(cloneToken bool) {
	c.modifyLock.Lock()
	defer c.modifyLock.Unlock()
	c.config.modifyLock.Lock()
	defer c.config.modifyLock.Unlock()

	c.config.CloneToken = cloneToken
}

// Clone creates a new client with the same configuration.
func (c *Client) Clone() (*Client, error) {
	return c.clone(c.config.CloneHeaders)
}

// CloneWithHeaders creates a new client similar to Clone, with the difference
// being that the headers are always cloned
func (c *Client) CloneWithHeaders() (*Client, error) {
	return c.clone(true)
}

// clone creates a new client, with the headers being cloned based on the
// passed in cloneheaders boolean
func (c *Client) clone(cloneHeaders bool) (*Client, error) {
	c.modifyLock.RLock()
	defer c.modifyLock.RUnlock()

	config := c.config
	config.modifyLock.RLock()
	defer config.modifyLock.RUnlock()

	newConfig := &Config{
		Address:      config.Address,
		MaxRetries:   config.MaxRetries,
		Timeout:      config.Timeout,
		CloneHeaders: config.CloneHeaders,
		CloneToken:   config.CloneToken,
	}
	client, err := NewClient(newConfig)
	if err != nil {
		return nil, err
	}

	if cloneHeaders {
		client.SetHeaders(c.Headers().Clone())
	}

	if config.CloneToken {
		client.SetToken(c.token)
	}

	return client, nil
}

func main() {
	client, err := NewClient(DefaultConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	client.SetNamespace("team-a/")
	client.SetToken("hvs.parent")

	done := make(chan string, 2)
	go func() { // auth handler cloning the client for a login request
		cl, err := client.CloneWithHeaders()
		if err != nil {
			done <- fmt.Sprint("clone: ", err)
			return
		}
		done <- fmt.Sprint("clone: namespace header ", cl.Headers()["X-Vault-Namespace"])
	}()
	time.Sleep(30 * time.Millisecond)
	go func() { // another goroutine reconfiguring the shared client
		client.SetCloneToken(true)
		done <- "SetCloneToken done"
	}()
	fmt.Println(<-done)
	fmt.Println(<-done)
}
