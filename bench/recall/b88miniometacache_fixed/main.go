// Project: minio/minio (cmd/metacache-set.go erasureObjects.listPath, cmd/metacache-stream.go metacacheBlockWriter), 2021, fixed in September 2021 by PR #13201 "Fix deadlock when error during metacache generation" (exact line approximate).
// Bug: while a listing is streamed into the metacache, the block writer callback that persists each block takes metaMu to record a putObject failure in the listing's metacache entry, but a typo locked metaMu a second time instead of unlocking it. The block writer goroutine deadlocks on itself, and the lister, which takes metaMu to publish the final listing state, hangs behind it; the fix replaces the second Lock with metaMu.Unlock().
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

const (
	minioMetaBucket    = ".minio.sys"
	metacacheBlockSize = 4
)

type scanStatus string

const (
	scanStateStarted scanStatus = "started"
	scanStateSuccess scanStatus = "success"
	scanStateError   scanStatus = "error"
)

type metacache struct {
	id, bucket, root string
	status           scanStatus
	error            string
}

type metaCacheEntry struct{ name string }

type metacacheBlock struct {
	n           int
	first, last string
	data        []byte
}

type listPathOptions struct{ ID, Bucket, BaseDir string }

func (o *listPathOptions) objectPath(block int) string {
	return fmt.Sprintf("buckets/%s/.metacache/%s/block-%d.s2", o.Bucket, o.ID, block)
}

// metacacheManager stands in for localMetacacheMgr, which tracks listings per bucket.
type metacacheManager struct {
	mu     sync.RWMutex
	caches map[string]metacache
}

var localMetacacheMgr = &metacacheManager{caches: make(map[string]metacache)}

func (m *metacacheManager) updateCacheEntry(update metacache) (metacache, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.caches[update.bucket+"/"+update.id] = update
	return update, nil
}

// updateMetacacheListing forwards to the peer owning the listing; here it is local.
func (o *listPathOptions) updateMetacacheListing(m metacache) (metacache, error) {
	return localMetacacheMgr.updateCacheEntry(m)
}

type metacacheBlockWriter struct {
	wg           sync.WaitGroup
	streamErr    error
	blockEntries int
}

func newMetacacheBlockWriter(in <-chan metaCacheEntry, nextBlock func(b *metacacheBlock) error) *metacacheBlockWriter {
	w := &metacacheBlockWriter{blockEntries: metacacheBlockSize}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var current metacacheBlock
		var n int
		var buf []byte
		finishBlock := func() {
			current.data = buf
			w.streamErr = nextBlock(&current)
			current.n++
			buf = nil
			current.first = ""
		}
		for o := range in {
			if len(o.name) == 0 || w.streamErr != nil {
				continue
			}
			if current.first == "" {
				current.first = o.name
			}
			if n >= w.blockEntries-1 {
				finishBlock()
				n = 0
			}
			n++
			buf = append(buf, o.name...)
			current.last = o.name
		}
		if n > 0 || current.n == 0 {
			finishBlock()
		}
	}()
	return w
}

func (w *metacacheBlockWriter) Close() error {
	w.wg.Wait()
	return w.streamErr
}

var errErasureWriteQuorum = errors.New("Write failed. Insufficient number of drives online")

type erasureObjects struct {
	setDriveCount, online int
	objects               []string
}

func (er *erasureObjects) putObject(ctx context.Context, bucket, object string, data []byte) error {
	if er.online < er.setDriveCount/2+1 {
		return errErasureWriteQuorum
	}
	return nil
}

func (er *erasureObjects) listPathRaw(ctx context.Context, bucket, path string, agreed func(metaCacheEntry)) error {
	for _, name := range er.objects {
		agreed(metaCacheEntry{name: name})
	}
	return nil
}

func (er *erasureObjects) listPath(ctx context.Context, o listPathOptions) (metacache, error) {
	ctx, cancel := context.WithCancel(ctx)
	meta := metacache{id: o.ID, bucket: o.Bucket, root: o.BaseDir, status: scanStateStarted}
	var metaMu sync.Mutex
	cacheCh := make(chan metaCacheEntry, metacacheBlockSize)
	done := make(chan struct{})

	go func() {
		defer close(done)
		defer cancel()
		bw := newMetacacheBlockWriter(cacheCh, func(b *metacacheBlock) error {
			err := er.putObject(ctx, minioMetaBucket, o.objectPath(b.n), b.data)
			if err != nil {
				metaMu.Lock()
				if meta.error != "" {
					meta.status = scanStateError
					meta.error = err.Error()
				}
				metaMu.Unlock()
				cancel()
				return err
			}
			return nil
		})

		err := er.listPathRaw(ctx, o.Bucket, o.BaseDir, func(entry metaCacheEntry) {
			cacheCh <- entry
		})

		metaMu.Lock()
		if err != nil {
			meta.status = scanStateError
			meta.error = err.Error()
		}
		if meta.error == "" {
			meta.status = scanStateSuccess
		}
		meta, _ = o.updateMetacacheListing(meta)
		metaMu.Unlock()

		close(cacheCh)
		if err := bw.Close(); err != nil {
			metaMu.Lock()
			meta.error = err.Error()
			meta.status = scanStateError
			meta, _ = o.updateMetacacheListing(meta)
			metaMu.Unlock()
		}
	}()

	<-done
	if meta.status == scanStateError {
		return meta, errors.New(meta.error)
	}
	return meta, nil
}

func main() {
	// Three of four drives are offline: listing works, saving the metacache fails.
	er := &erasureObjects{setDriveCount: 4, online: 1}
	for i := 0; i < 6; i++ {
		er.objects = append(er.objects, fmt.Sprintf("photos/2021/img-%03d.jpg", i))
	}
	o := listPathOptions{ID: "4b5c-listing", Bucket: "photos", BaseDir: "2021/"}
	meta, err := er.listPath(context.Background(), o)
	fmt.Printf("listing %s finished: status=%s err=%v\n", meta.id, meta.status, err)
}
