// Project: ory/hydra (client/manager_memory.go, oauth2/fosite_store_memory.go, the in-memory backend used with DSN=memory), v1.0.0 to v1.8.x, 2019-2020.
// Bug: client.MemoryManager.Authenticate read-locks the manager and then calls GetConcreteClient, which read-locks the same RWMutex again. When an admin request (UpdateClient, CreateClient or DeleteClient) asks for the write lock between the two read locks, the inner RLock queues behind the writer and the writer waits for the outer read lock, so client authentication and the admin API hang; the memory managers were replaced by the pop-based persister in v1.9.0 (PR #2059), and the fix modelled here drops the outer RLock.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var ErrNotFound = errors.New("not found")

// fosite.Hasher
type Hasher interface {
	Compare(ctx context.Context, hash, data []byte) error
	Hash(ctx context.Context, data []byte) ([]byte, error)
}

type plainHasher struct{}

func (plainHasher) Compare(_ context.Context, hash, data []byte) error {
	if string(hash) != "h:"+string(data) {
		return errors.New("secret mismatch")
	}
	return nil
}
func (plainHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	return []byte("h:" + string(data)), nil
}

type Client struct {
	ClientID string
	Secret   string
	Name     string
}

func (c *Client) GetID() string           { return c.ClientID }
func (c *Client) GetHashedSecret() []byte { return []byte(c.Secret) }

// Manager is the client storage used by the registry.
type Manager interface {
	GetConcreteClient(ctx context.Context, id string) (*Client, error)
	UpdateClient(ctx context.Context, c *Client) error
	Authenticate(ctx context.Context, id string, secret []byte) (*Client, error)
}

// InternalRegistry is the driver registry the managers receive.
type InternalRegistry interface {
	ClientHasher() Hasher
	ClientManager() Manager
}

type MemoryManager struct {
	Clients []Client
	r       InternalRegistry
	sync.RWMutex
}

func NewMemoryManager(r InternalRegistry) *MemoryManager {
	return &MemoryManager{Clients: []Client{}, r: r}
}

func (m *MemoryManager) GetConcreteClient(ctx context.Context, id string) (*Client, error) {
	m.RLock()
	defer m.RUnlock()
	for _, c := range m.Clients {
		if c.GetID() == id {
			return &c, nil
		}
	}
	return nil, ErrNotFound
}

func (m *MemoryManager) UpdateClient(ctx context.Context, c *Client) error {
	o, err := m.GetConcreteClient(ctx, c.GetID())
	if err != nil {
		return err
	}
	if c.Secret == "" {
		c.Secret = string(o.GetHashedSecret())
	}
	m.Lock()
	defer m.Unlock()
	for k, f := range m.Clients {
		if f.GetID() == c.GetID() {
			m.Clients[k] = *c
		}
	}
	return nil
}

func (m *MemoryManager) Authenticate(ctx context.Context, id string, secret []byte) (*Client, error) {
	m.RLock()
	defer m.RUnlock()

	c, err := m.GetConcreteClient(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := m.r.ClientHasher().Compare(ctx, c.GetHashedSecret(), secret); err != nil {
		return nil, err
	}
	return c, nil
}

func (m *MemoryManager) CreateClient(ctx context.Context, c *Client) error {
	if _, err := m.GetConcreteClient(ctx, c.GetID()); err == nil {
		return errors.New("unique violation")
	}
	m.Lock()
	defer m.Unlock()
	hash, err := m.r.ClientHasher().Hash(ctx, []byte(c.Secret))
	if err != nil {
		return err
	}
	c.Secret = string(hash)
	m.Clients = append(m.Clients, *c)
	return nil
}

// FositeMemoryStore delegates client lookups to the registry's client manager.
type FositeMemoryStore struct {
	r InternalRegistry
	sync.RWMutex
}

func (s *FositeMemoryStore) Authenticate(ctx context.Context, id string, secret []byte) (*Client, error) {
	return s.r.ClientManager().Authenticate(ctx, id, secret)
}

type registryMemory struct{ cm *MemoryManager }

func (r *registryMemory) ClientHasher() Hasher   { return plainHasher{} }
func (r *registryMemory) ClientManager() Manager { return r.cm }

func main() {
	ctx := context.Background()
	reg := &registryMemory{}
	reg.cm = NewMemoryManager(reg)
	store := &FositeMemoryStore{r: reg}
	if err := reg.cm.CreateClient(ctx, &Client{ClientID: "app", Secret: "s3cret"}); err != nil {
		panic(err)
	}

	const rounds = 200000
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ { // token endpoint: client authentication
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < rounds; j++ {
				if _, err := store.Authenticate(ctx, "app", []byte("s3cret")); err != nil {
					panic(err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // admin API: PUT /clients/app
		defer wg.Done()
		for j := 0; j < rounds; j++ {
			_ = reg.ClientManager().UpdateClient(ctx, &Client{ClientID: "app", Name: fmt.Sprint("app-", j)})
		}
	}()
	wg.Wait()
	fmt.Println("done")
}
