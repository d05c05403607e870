// Project: Grafana Loki, component: ingester (pkg/ingester flush.go / instance.go / stream.go).
// Bug (as remembered): the flush loop sweeps every instance and every stream;
// after chunks were flushed, removeFlushedChunks took stream.chunkMtx and,
// when the stream became empty, took instance.streamsMtx to delete the stream
// from the instance. The push path takes instance.streamsMtx (getOrCreateStream)
// and then stream.chunkMtx (stream.Push). AB-BA between the two structs:
// ingester pushes and the flush loop deadlocked under load. The fix took
// instance.streamsMtx first and stream.chunkMtx second in removeFlushedChunks.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Entry struct {
	Timestamp time.Time
	Line      string
}

type chunkDesc struct {
	entries []Entry
	flushed time.Time
	closed  bool
}

type stream struct {
	chunkMtx sync.RWMutex
	labels   string
	chunks   []chunkDesc
}

func (s *stream) Push(entries []Entry) {
	s.chunkMtx.Lock()
	defer s.chunkMtx.Unlock()
	if len(s.chunks) == 0 || s.chunks[len(s.chunks)-1].closed {
		s.chunks = append(s.chunks, chunkDesc{})
	}
	c := &s.chunks[len(s.chunks)-1]
	c.entries = append(c.entries, entries...)
	if len(c.entries) > 2 {
		c.closed = true
	}
}

type instance struct {
	streamsMtx sync.RWMutex
	instanceID string
	streams    map[string]*stream
}

func (i *instance) getOrCreateStream(labels string) *stream {
	s, ok := i.streams[labels]
	if !ok {
		s = &stream{labels: labels}
		i.streams[labels] = s
	}
	return s
}

func (i *instance) Push(labels string, entries []Entry) {
	i.streamsMtx.Lock()
	defer i.streamsMtx.Unlock()
	s := i.getOrCreateStream(labels)
	s.Push(entries)
}

type Ingester struct {
	instancesMtx sync.RWMutex
	instances    map[string]*instance
}

func (i *Ingester) getOrCreateInstance(id string) *instance {
	i.instancesMtx.Lock()
	defer i.instancesMtx.Unlock()
	inst, ok := i.instances[id]
	if !ok {
		inst = &instance{instanceID: id, streams: map[string]*stream{}}
		i.instances[id] = inst
	}
	return inst
}

func (i *Ingester) sweepUsers() {
	i.instancesMtx.RLock()
	instances := make([]*instance, 0, len(i.instances))
	for _, inst := range i.instances {
		instances = append(instances, inst)
	}
	i.instancesMtx.RUnlock()
	for _, inst := range instances {
		i.sweepInstance(inst)
	}
}

func (i *Ingester) sweepInstance(inst *instance) {
	inst.streamsMtx.RLock()
	streams := make([]*stream, 0, len(inst.streams))
	for _, s := range inst.streams {
		streams = append(streams, s)
	}
	inst.streamsMtx.RUnlock()
	for _, s := range streams {
		i.flushStream(inst, s)
	}
}

func (i *Ingester) flushStream(inst *instance, s *stream) {
	s.chunkMtx.Lock()
	for j := range s.chunks {
		if s.chunks[j].closed {
			s.chunks[j].flushed = time.Now() // pretend we wrote it to the store
		}
	}
	s.chunkMtx.Unlock()
	i.removeFlushedChunks(inst, s)
}

func (i *Ingester) removeFlushedChunks(inst *instance, s *stream) {
	// Fix: same order as the push path - instance.streamsMtx, then stream.chunkMtx.
	inst.streamsMtx.Lock()
	defer inst.streamsMtx.Unlock()
	s.chunkMtx.Lock()
	defer s.chunkMtx.Unlock()
	for len(s.chunks) > 0 && !s.chunks[0].flushed.IsZero() {
		s.chunks = s.chunks[1:]
	}
	if len(s.chunks) == 0 {
		delete(inst.streams, s.labels)
	}
}

func (i *Ingester) flushLoop(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
			i.sweepUsers()
		}
	}
}

func main() {
	ing := &Ingester{instances: map[string]*instance{}}
	stop := make(chan struct{})
	go ing.flushLoop(stop)
	for t := 0; t < 4; t++ {
		go func(tenant string) {
			inst := ing.getOrCreateInstance(tenant)
			for n := 0; n < 1000; n++ {
				inst.Push(fmt.Sprintf(`{app="a%d"}`, n%3), []Entry{{time.Now(), "line"}})
			}
		}(fmt.Sprintf("tenant-%d", t))
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
}
