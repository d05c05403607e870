// Command b70influxkvupdate reproduces a self-deadlock modelled on InfluxDB
// 2.x's in-memory key/value store (inmem.KVStore) and the kv.Service that
// runs bucket creation inside KVStore.Update, no specific upstream bug.
//
// KVStore.Update takes the store's write lock s.mu and runs the caller's
// function, a func(Tx) error parameter, while the lock is held; View does
// the same under the read lock. The bucket service creates a bucket inside
// Update, and on the way (createBucket, then validateOrg) it looks the
// owning organization up through the public FindOrganizationByID, which
// opens its own read transaction with View. View calls s.mu.RLock while the
// same goroutine still holds s.mu for writing, so it blocks forever.
//
// The fix resolves the organization with the transaction-scoped helper
// findOrganizationByIDTx, using the Tx that Update already passed in.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

type Tx struct {
	kv       *KVStore
	writable bool
	ctx      context.Context
}

func (tx *Tx) Get(bucket, key string) ([]byte, error) {
	b, ok := tx.kv.buckets[bucket]
	if !ok {
		return nil, fmt.Errorf("bucket %q not found", bucket)
	}
	v, ok := b[key]
	if !ok {
		return nil, errNotFound
	}
	return v, nil
}

func (tx *Tx) Put(bucket, key string, value []byte) error {
	if !tx.writable {
		return errors.New("tx is not writable")
	}
	b, ok := tx.kv.buckets[bucket]
	if !ok {
		b = make(map[string][]byte)
		tx.kv.buckets[bucket] = b
	}
	b[key] = value
	return nil
}

var errNotFound = errors.New("key not found")

type KVStore struct {
	mu      sync.RWMutex
	buckets map[string]map[string][]byte
}

func NewKVStore() *KVStore {
	return &KVStore{buckets: map[string]map[string][]byte{
		"organizationsv1": {},
		"bucketsv1":       {},
		"bucketindexv1":   {},
	}}
}

func (s *KVStore) View(ctx context.Context, fn func(*Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return fn(&Tx{kv: s, ctx: ctx})
}

func (s *KVStore) Update(ctx context.Context, fn func(*Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(&Tx{kv: s, writable: true, ctx: ctx})
}

type Organization struct {
	ID   string
	Name string
}

type Bucket struct {
	ID              string
	OrgID           string
	Name            string
	RetentionPeriod int64
}

type Service struct {
	kv     *KVStore
	nextID int
}

func (s *Service) CreateOrganization(ctx context.Context, o *Organization) error {
	return s.kv.Update(ctx, func(tx *Tx) error {
		return tx.Put("organizationsv1", o.ID, []byte(o.Name))
	})
}

func (s *Service) FindOrganizationByID(ctx context.Context, id string) (*Organization, error) {
	var o *Organization
	err := s.kv.View(ctx, func(tx *Tx) error {
		org, err := s.findOrganizationByIDTx(ctx, tx, id)
		o = org
		return err
	})
	return o, err
}

func (s *Service) findOrganizationByIDTx(ctx context.Context, tx *Tx, id string) (*Organization, error) {
	v, err := tx.Get("organizationsv1", id)
	if err != nil {
		return nil, fmt.Errorf("organization %s: %w", id, err)
	}
	return &Organization{ID: id, Name: string(v)}, nil
}

func (s *Service) CreateBucket(ctx context.Context, b *Bucket) error {
	return s.kv.Update(ctx, func(tx *Tx) error {
		return s.createBucket(ctx, tx, b)
	})
}

func (s *Service) createBucket(ctx context.Context, tx *Tx, b *Bucket) error {
	if b.Name == "" || b.Name[0] == '_' {
		return fmt.Errorf("bucket name %q is invalid", b.Name)
	}
	if err := s.validateOrg(ctx, tx, b); err != nil {
		return err
	}
	if _, err := tx.Get("bucketindexv1", b.OrgID+"/"+b.Name); err == nil {
		return fmt.Errorf("bucket %q already exists", b.Name)
	}
	s.nextID++
	b.ID = fmt.Sprintf("%016x", s.nextID)
	if err := tx.Put("bucketindexv1", b.OrgID+"/"+b.Name, []byte(b.ID)); err != nil {
		return err
	}
	return tx.Put("bucketsv1", b.ID, []byte(b.Name))
}

func (s *Service) validateOrg(ctx context.Context, tx *Tx, b *Bucket) error {
	org, err := s.FindOrganizationByID(ctx, b.OrgID)
	if err != nil {
		return err
	}
	if org.Name == "" {
		return fmt.Errorf("organization %s has no name", org.ID)
	}
	return nil
}

func main() {
	ctx := context.Background()
	svc := &Service{kv: NewKVStore()}
	if err := svc.CreateOrganization(ctx, &Organization{ID: "020f755c3c082000", Name: "acme"}); err != nil {
		fmt.Println("create org:", err)
		return
	}
	b := &Bucket{OrgID: "020f755c3c082000", Name: "telegraf", RetentionPeriod: 3600}
	if err := svc.CreateBucket(ctx, b); err != nil {
		fmt.Println("create bucket:", err)
		return
	}
	fmt.Printf("created bucket %s (%s)\n", b.Name, b.ID)
}
