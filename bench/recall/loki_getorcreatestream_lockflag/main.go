// Project: grafana/loki (pkg/ingester/instance.go)
// Bug: instance.getOrCreateStream(stream, lock bool, record) takes
//
//	i.streamsMtx itself when lock == true. The WAL checkpoint recovery path
//	already holds i.streamsMtx for the whole batch but passed lock = true
//	(a constant) down through loadStreams, so the ingester hangs forever
//	on startup replay.
//
// Fix: the recovery path, which already owns streamsMtx, passes lock = false.
package main

import (
	"fmt"
	"hash/fnv"
	"sync"
	"time"
)

type Entry struct {
	Timestamp time.Time
	Line      string
}

type Stream struct {
	Labels  string
	Entries []Entry
}

type WALRecord struct {
	UserID  string
	Series  []string
	Entries int
}

type Limiter struct {
	maxStreamsPerUser int
}

func (l *Limiter) AssertMaxStreamsPerUser(userID string, streams int) error {
	if streams >= l.maxStreamsPerUser {
		return fmt.Errorf("user %s: max streams (%d) exceeded", userID, l.maxStreamsPerUser)
	}
	return nil
}

type stream struct {
	labels   string
	fp       uint64
	chunkMtx sync.Mutex
	entries  []Entry
}

func (s *stream) Push(entries []Entry) int {
	s.chunkMtx.Lock()
	defer s.chunkMtx.Unlock()
	s.entries = append(s.entries, entries...)
	return len(entries)
}

type instance struct {
	streamsMtx  sync.RWMutex
	streams     map[string]*stream
	streamsByFP map[uint64]*stream

	instanceID string
	limiter    *Limiter
	tailerMtx  sync.RWMutex
	tailers    map[uint32]struct{}
}

func fingerprint(labels string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(labels))
	return h.Sum64()
}

func (i *instance) Push(req []Stream, record *WALRecord) error {
	i.streamsMtx.Lock()
	defer i.streamsMtx.Unlock()
	for _, reqStream := range req {
		s, err := i.getOrCreateStream(reqStream, false, record)
		if err != nil {
			return err
		}
		record.Entries += s.Push(reqStream.Entries)
	}
	return nil
}

func (i *instance) getOrCreateStream(pushReqStream Stream, lock bool, record *WALRecord) (*stream, error) {
	if lock {
		i.streamsMtx.Lock() // deadlock: recoverCheckpoint already holds streamsMtx
		defer i.streamsMtx.Unlock()
	}
	if s, ok := i.streams[pushReqStream.Labels]; ok {
		return s, nil
	}
	if err := i.limiter.AssertMaxStreamsPerUser(i.instanceID, len(i.streams)); err != nil {
		return nil, err
	}
	s := &stream{labels: pushReqStream.Labels, fp: fingerprint(pushReqStream.Labels)}
	i.streams[s.labels] = s
	i.streamsByFP[s.fp] = s
	if record != nil {
		record.Series = append(record.Series, s.labels)
	}
	return s, nil
}

func (i *instance) loadStreams(series []Stream, lock bool) (int, error) {
	n := 0
	for _, st := range series {
		s, err := i.getOrCreateStream(st, lock, nil)
		if err != nil {
			return n, err
		}
		n += s.Push(st.Entries)
	}
	return n, nil
}

// recoverCheckpoint replays one WAL checkpoint segment into the instance.
func (i *instance) recoverCheckpoint(series []Stream) (int, error) {
	i.streamsMtx.Lock()
	defer i.streamsMtx.Unlock()
	return i.loadStreams(series, true) // BUG: streamsMtx is already held
}

func (i *instance) numStreams() int {
	i.streamsMtx.RLock()
	defer i.streamsMtx.RUnlock()
	return len(i.streams)
}

func main() {
	inst := &instance{
		streams:     map[string]*stream{},
		streamsByFP: map[uint64]*stream{},
		instanceID:  "tenant-1",
		limiter:     &Limiter{maxStreamsPerUser: 10000},
		tailers:     map[uint32]struct{}{},
	}
	now := time.Now()
	checkpoint := []Stream{
		{Labels: `{app="api", env="prod"}`, Entries: []Entry{{now, "GET /health 200"}}},
		{Labels: `{app="db", env="prod"}`, Entries: []Entry{{now, "checkpoint complete"}}},
	}
	n, err := inst.recoverCheckpoint(checkpoint)
	if err != nil {
		fmt.Println("recover:", err)
		return
	}
	rec := &WALRecord{UserID: inst.instanceID}
	_ = inst.Push([]Stream{{Labels: `{app="api", env="prod"}`, Entries: []Entry{{now, "GET / 200"}}}}, rec)
	fmt.Printf("recovered %d entries, %d streams, pushed %d\n", n, inst.numStreams(), rec.Entries)
}
