// Project: seaweedfs/seaweedfs (then chrislusf/seaweedfs) 3.2x, volume server.
// Files/functions: weed/server/volume_server_handlers.go
// (VolumeServer.privateStoreHandler, the GET/HEAD download-limit loop) and
// weed/server/volume_server_handlers_read.go (VolumeServer.GetOrHeadHandler).
// Issue/PR: seaweedfs/seaweedfs PR #3613 "fix: volume Deadlock when exception
// is thrown" (September 2022).
//
// With -concurrentDownloadLimitMB set, a GET takes the L mutex of
// vs.inFlightDownloadDataLimitCond and loops while the bytes being downloaded
// exceed the limit, calling Wait() until a finishing download signals the
// Cond. Inside the loop a select checks r.Context().Done() so a client that
// went away stops waiting, but that branch only logged "request cancelled
// from ..." and returned: it never called L.Unlock(). The handler goroutine
// ends still owning the Cond's mutex, and every later GET or HEAD on that
// volume server (and the filer reads that go through it) blocks forever in
// L.Lock(). The fix unlocks the mutex on that branch and answers 500, so the
// filer retries on another volume server.
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

type Needle struct {
	Id       uint64
	DataSize uint32
	Data     []byte
}

type Store struct{ needles map[string]*Needle }

func (s *Store) ReadVolumeNeedle(fid string) (*Needle, error) {
	if n, ok := s.needles[fid]; ok {
		return n, nil
	}
	return nil, fmt.Errorf("needle %s not found", fid)
}

type VolumeServer struct {
	store                         *Store
	concurrentDownloadLimit       int64
	inFlightDownloadDataSize      int64
	inFlightDownloadDataLimitCond *sync.Cond
}

func NewVolumeServer(store *Store, concurrentDownloadLimitMB int64) *VolumeServer {
	return &VolumeServer{
		store:                         store,
		concurrentDownloadLimit:       concurrentDownloadLimitMB * 1024 * 1024,
		inFlightDownloadDataLimitCond: sync.NewCond(new(sync.Mutex)),
	}
}

func (vs *VolumeServer) privateStoreHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "SeaweedFS Volume 3.26")
	switch r.Method {
	case "GET", "HEAD":
		vs.inFlightDownloadDataLimitCond.L.Lock()
		for vs.concurrentDownloadLimit != 0 && atomic.LoadInt64(&vs.inFlightDownloadDataSize) > vs.concurrentDownloadLimit {
			select {
			case <-r.Context().Done():
				fmt.Printf("request cancelled from %s: %v\n", r.RemoteAddr, r.Context().Err())
				return
			default:
				vs.inFlightDownloadDataLimitCond.Wait()
			}
		}
		vs.inFlightDownloadDataLimitCond.L.Unlock()
		vs.GetOrHeadHandler(w, r)
	}
}

func (vs *VolumeServer) GetOrHeadHandler(w http.ResponseWriter, r *http.Request) {
	n, err := vs.store.ReadVolumeNeedle(r.URL.Path[1:])
	if err != nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	atomic.AddInt64(&vs.inFlightDownloadDataSize, int64(n.DataSize))
	defer func() {
		atomic.AddInt64(&vs.inFlightDownloadDataSize, -int64(n.DataSize))
		vs.inFlightDownloadDataLimitCond.Signal()
	}()
	_, _ = w.Write(n.Data)
}

// slowClient is a reader on a slow link: Write returns when the bytes are drained.
type slowClient struct {
	*httptest.ResponseRecorder
	drained chan struct{}
}

func (c *slowClient) Write(b []byte) (int, error) {
	<-c.drained
	return c.ResponseRecorder.Write(b)
}

func main() {
	const mb = 1024 * 1024
	vs := NewVolumeServer(&Store{needles: map[string]*Needle{
		"3,01637037d6": {Id: 1, DataSize: 1 * mb, Data: []byte("thumbnail")},
		"3,02a1b2c3d4": {Id: 2, DataSize: 5 * mb, Data: []byte("video")},
	}}, 2)

	get := func(ctx context.Context, fid string, w http.ResponseWriter, done chan<- struct{}) {
		r := httptest.NewRequest("GET", "/"+fid, nil).WithContext(ctx)
		vs.privateStoreHandler(w, r)
		close(done)
	}

	small := &slowClient{httptest.NewRecorder(), make(chan struct{})}
	large := &slowClient{httptest.NewRecorder(), make(chan struct{})}
	smallDone, largeDone := make(chan struct{}), make(chan struct{})
	go get(context.Background(), "3,01637037d6", small, smallDone)
	time.Sleep(10 * time.Millisecond)
	go get(context.Background(), "3,02a1b2c3d4", large, largeDone)
	time.Sleep(10 * time.Millisecond) // 6MB in flight, limit 2MB

	ctx, cancel := context.WithCancel(context.Background())
	queuedDone := make(chan struct{})
	go get(ctx, "3,01637037d6", httptest.NewRecorder(), queuedDone)
	time.Sleep(10 * time.Millisecond)
	cancel()             // the queued client hangs up while waiting
	close(small.drained) // the small download finishes and signals; 5MB still in flight
	<-smallDone
	<-queuedDone
	close(large.drained)
	<-largeDone

	nextDone := make(chan struct{})
	next := httptest.NewRecorder()
	go get(context.Background(), "3,01637037d6", next, nextDone)
	<-nextDone
	fmt.Println("next download:", next.Code, next.Body.String())
}
