// Project: moby/buildkit (cache/manager.go cacheManager.GetFromSnapshotter/get/getRecord, cache/refs.go immutableRef.Release/release), v0.5, May 2019.
// Bug: getRecord runs with the cache manager lock cm.mu held (Get and GetFromSnapshotter take it) and, after taking a reference on the parent record through cm.get, releases that parent on its error paths with the exported parent.Release, which locks cm.mu again. When loading a record fails after its parent was resolved (here the metadata commit of initializeMetadata fails while importing a snapshot), the build goroutine deadlocks on cm.mu and every later cache access hangs (the hang in moby/buildkit#1014, "Build stalls after idle connection closed", whose trace shows immutableRef.Release called from getRecord's deferred func; fixed in 2019 by releasing the parent with the lock-free release under parent.mu, as later manager.go does; fix PR number not remembered).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var errNotFound = errors.New("not found")

type Info struct{ Parent string }

type Snapshotter struct{ snaps map[string]Info }

func (s *Snapshotter) Stat(ctx context.Context, id string) (Info, error) {
	if info, ok := s.snaps[id]; ok {
		return info, nil
	}
	return Info{}, errNotFound
}

// StorageItem is a metadata.StorageItem backed by bolt.
type StorageItem struct {
	id        string
	values    map[string]string
	queue     []func()
	deleted   bool
	commitErr error // what the bolt transaction returns
}

func (s *StorageItem) Commit() error {
	if s.commitErr != nil {
		return s.commitErr
	}
	for _, fn := range s.queue {
		fn()
	}
	s.queue = nil
	return nil
}

type MetadataStore struct{ items map[string]*StorageItem }

func (s *MetadataStore) Get(id string) (*StorageItem, bool) {
	si, ok := s.items[id]
	if !ok {
		si = &StorageItem{id: id, values: map[string]string{}}
		s.items[id] = si
	}
	return si, ok
}

type RefOption func(*cacheRecord) error

func WithDescription(descr string) RefOption {
	return func(cr *cacheRecord) error {
		cr.md.queue = append(cr.md.queue, func() { cr.md.values["description"] = descr })
		return nil
	}
}

type ImmutableRef interface {
	Release(context.Context) error
}

type cacheRecord struct {
	mu     *sync.Mutex
	refs   map[*immutableRef]struct{}
	cm     *cacheManager
	parent ImmutableRef
	md     *StorageItem
}

func (cr *cacheRecord) ref() *immutableRef {
	ref := &immutableRef{cacheRecord: cr}
	cr.refs[ref] = struct{}{}
	return ref
}

type immutableRef struct{ *cacheRecord }

func (sr *immutableRef) Release(ctx context.Context) error {
	sr.cm.mu.Lock()
	defer sr.cm.mu.Unlock()
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return sr.release(ctx)
}

func (sr *immutableRef) release(ctx context.Context) error {
	delete(sr.refs, sr)
	return nil
}

type cacheManager struct {
	records     map[string]*cacheRecord
	mu          sync.Mutex
	Snapshotter *Snapshotter
	md          *MetadataStore
}

// GetFromSnapshotter returns an immutable reference for a snapshot created outside the cache.
func (cm *cacheManager) GetFromSnapshotter(ctx context.Context, id string, opts ...RefOption) (ImmutableRef, error) {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	return cm.get(ctx, id, true, opts...)
}

// get requires manager lock to be taken
func (cm *cacheManager) get(ctx context.Context, id string, fromSnapshotter bool, opts ...RefOption) (ImmutableRef, error) {
	rec, err := cm.getRecord(ctx, id, fromSnapshotter, opts...)
	if err != nil {
		return nil, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.ref(), nil
}

// getRecord returns record for id. Requires manager lock.
func (cm *cacheManager) getRecord(ctx context.Context, id string, fromSnapshotter bool, opts ...RefOption) (cr *cacheRecord, retErr error) {
	if rec, ok := cm.records[id]; ok {
		return rec, nil
	}
	md, ok := cm.md.Get(id)
	if !ok && !fromSnapshotter {
		return nil, errNotFound
	}
	info, err := cm.Snapshotter.Stat(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, errNotFound)
	}

	var parent ImmutableRef
	if info.Parent != "" {
		parent, err = cm.get(ctx, info.Parent, fromSnapshotter, opts...)
		if err != nil {
			return nil, err
		}
		defer func() {
			if retErr != nil {
				p := parent.(*immutableRef)
				p.mu.Lock()
				p.release(context.TODO())
				p.mu.Unlock()
			}
		}()
	}
	rec := &cacheRecord{
		mu:     &sync.Mutex{},
		cm:     cm,
		refs:   make(map[*immutableRef]struct{}),
		parent: parent,
		md:     md,
	}
	// the record was deleted but we crashed before data on disk was removed
	if md.deleted {
		return nil, errNotFound
	}
	if err := initializeMetadata(rec, opts...); err != nil {
		return nil, err
	}
	cm.records[id] = rec
	return rec, nil
}

func initializeMetadata(rec *cacheRecord, opts ...RefOption) error {
	if _, ok := rec.md.values["createdAt"]; ok {
		return nil
	}
	rec.md.queue = append(rec.md.queue, func() { rec.md.values["createdAt"] = "2019-05-21" })
	for _, opt := range opts {
		if err := opt(rec); err != nil {
			return err
		}
	}
	return rec.md.Commit()
}

func main() {
	cm := &cacheManager{
		records: map[string]*cacheRecord{},
		Snapshotter: &Snapshotter{snaps: map[string]Info{
			"sha256:base":  {},
			"sha256:layer": {Parent: "sha256:base"},
		}},
		md: &MetadataStore{items: map[string]*StorageItem{}},
	}
	// The unpacked image layer exists in the snapshotter, but persisting its cache metadata fails.
	cm.md.items["sha256:layer"] = &StorageItem{id: "sha256:layer", values: map[string]string{}, commitErr: errors.New("no space left on device")}

	_, err := cm.GetFromSnapshotter(context.TODO(), "sha256:layer", WithDescription("pulled from docker.io/library/alpine"))
	fmt.Println("import layer:", err)
	_, err = cm.GetFromSnapshotter(context.TODO(), "sha256:base")
	fmt.Println("base:", err)
}
