// Project: docker/distribution (the registry, now distribution/distribution), master, May 2018.
// Files: registry/storage/driver/inmemory/driver.go (driver.GetContent, Reader, PutContent,
// Driver wrapping baseEmbed), registry/storage/driver/base/base.go (Base.GetContent,
// Base.PutContent) and registry/storage/blobstore.go (blobStore.Get, Put).
// Fixed by PR distribution/distribution#2599 "Fix deadlock in the inmemory storage driver".
//
// The in-memory storage driver guards its file tree with a sync.RWMutex. GetContent read-locked
// d.mutex and then called d.Reader, which read-locks d.mutex again before looking the path up. The
// PR's goroutine dump shows exactly that: GetContent blocked at its RLock, and another GetContent
// blocked in the nested RLock inside Reader, while a PutContent (a blob or manifest push through
// base.Base and the blob store) waits in Lock. Once a writer queues between a reader's two RLocks,
// no new reader is admitted, so the nested RLock waits for the writer and the writer waits for the
// outer reader. The fix drops the outer lock from GetContent and relies on the one Reader takes.
// (The call to preempted between the two read locks stands in for the scheduling that lets the push
// queue in between; the registry code has no such pause.)
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

type StorageDriver interface {
	GetContent(ctx context.Context, path string) ([]byte, error)
	PutContent(ctx context.Context, path string, content []byte) error
	Reader(ctx context.Context, path string, offset int64) (io.ReadCloser, error)
}

// Base wraps a driver with path checks and tracing (registry/storage/driver/base).
type Base struct {
	StorageDriver
}

func (base *Base) GetContent(ctx context.Context, path string) ([]byte, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("invalid path %q", path)
	}
	return base.StorageDriver.GetContent(ctx, path)
}

func (base *Base) PutContent(ctx context.Context, path string, content []byte) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("invalid path %q", path)
	}
	return base.StorageDriver.PutContent(ctx, path, content)
}

type file struct{ data []byte }

type dir struct{ files map[string]*file }

func (d *dir) find(p string) *file {
	return d.files[p]
}

// preempted models the goroutine being descheduled for a while; see the header.
func preempted() {
	time.Sleep(100 * time.Millisecond)
}

type driver struct {
	root  *dir
	mutex sync.RWMutex
}

type baseEmbed struct{ Base }

// Driver is the exported in-memory storage driver.
type Driver struct{ baseEmbed }

func New() *Driver {
	return &Driver{baseEmbed{Base{StorageDriver: &driver{root: &dir{files: map[string]*file{}}}}}}
}

func (d *driver) GetContent(ctx context.Context, path string) ([]byte, error) {
	d.mutex.RLock()
	defer d.mutex.RUnlock()
	preempted()

	rc, err := d.Reader(ctx, path, 0)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func (d *driver) Reader(ctx context.Context, path string, offset int64) (io.ReadCloser, error) {
	d.mutex.RLock()
	defer d.mutex.RUnlock()

	if offset < 0 {
		return nil, fmt.Errorf("invalid offset %d for %s", offset, path)
	}
	found := d.root.find(path)
	if found == nil {
		return nil, fmt.Errorf("path not found: %s", path)
	}
	return io.NopCloser(bytes.NewReader(found.data[offset:])), nil
}

func (d *driver) PutContent(ctx context.Context, p string, contents []byte) error {
	d.mutex.Lock()
	defer d.mutex.Unlock()
	d.root.files[p] = &file{data: append([]byte(nil), contents...)}
	return nil
}

type blobStore struct{ driver StorageDriver }

func (bs *blobStore) Get(ctx context.Context, path string) ([]byte, error) {
	return bs.driver.GetContent(ctx, path)
}

func (bs *blobStore) Put(ctx context.Context, path string, p []byte) error {
	return bs.driver.PutContent(ctx, path, p)
}

func main() {
	ctx := context.Background()
	bs := &blobStore{driver: New()}
	const linkPath = "/docker/registry/v2/repositories/library/alpine/_manifests/tags/latest/current/link"
	_ = bs.Put(ctx, linkPath, []byte("sha256:4bcff63911fcb4448bd4fdacec207030997caf25e9bea4045fa6c8c44de311d1"))

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // GET /v2/library/alpine/manifests/latest
		defer wg.Done()
		if b, err := bs.Get(ctx, linkPath); err == nil {
			fmt.Println("resolved tag to", string(b))
		}
	}()
	go func() { // a concurrent push uploads a blob
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		_ = bs.Put(ctx, "/docker/registry/v2/blobs/sha256/4b/4bcff639/data", []byte("layer"))
	}()
	wg.Wait()
	fmt.Println("done")
}
