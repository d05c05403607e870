// Project: grafana/tempo (modules/ingester)
// Bug: instance.CutCompleteTraces held tracesMtx while appending the cut
// traces to the head block under blocksMtx, while CutBlockIfReady held
// blocksMtx and read the live trace count under tracesMtx for its decision,
// an AB-BA inversion between the flush loop and the cut loop.
// Fix: collect the complete traces under tracesMtx, release it, and only
// then take blocksMtx to write them into the head block.
package b23tempoinstance_fixed

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type liveTrace struct {
	traceID    []byte
	batches    [][]byte
	lastAppend time.Time
}

type headBlock struct {
	blockID string
	objects map[string][]byte
	size    int
}

func (b *headBlock) Append(id []byte, obj []byte) {
	b.objects[string(id)] = obj
	b.size += len(obj)
}

func (b *headBlock) DataLength() int { return b.size }

type instance struct {
	tracesMtx sync.Mutex
	traces    map[uint32]*liveTrace

	blocksMtx        sync.RWMutex
	headBlock        *headBlock
	completingBlocks []*headBlock
	lastBlockCut     time.Time

	instanceID     string
	maxBlockBytes  int
	maxLiveTraces  int
	beforeAppendFn func()
}

func newInstance(id string) *instance {
	return &instance{
		instanceID:    id,
		traces:        map[uint32]*liveTrace{},
		headBlock:     &headBlock{blockID: "b-0", objects: map[string][]byte{}},
		lastBlockCut:  time.Now(),
		maxBlockBytes: 1 << 20,
		maxLiveTraces: 1000,
	}
}

func (i *instance) PushBytes(token uint32, id []byte, obj []byte) {
	i.tracesMtx.Lock()
	defer i.tracesMtx.Unlock()
	tr, ok := i.traces[token]
	if !ok {
		tr = &liveTrace{traceID: id}
		i.traces[token] = tr
	}
	tr.batches = append(tr.batches, obj)
	tr.lastAppend = time.Now()
}

func (i *instance) liveTraceCount() int {
	i.tracesMtx.Lock()
	defer i.tracesMtx.Unlock()
	return len(i.traces)
}

func (i *instance) CutCompleteTraces(cutoff time.Duration, immediate bool) error {
	i.tracesMtx.Lock()
	now := time.Now()
	var complete []*liveTrace
	for token, tr := range i.traces {
		if !immediate && now.Sub(tr.lastAppend) < cutoff {
			continue
		}
		complete = append(complete, tr)
		delete(i.traces, token)
	}
	i.tracesMtx.Unlock()

	for _, tr := range complete {
		if i.beforeAppendFn != nil {
			i.beforeAppendFn()
		}
		i.blocksMtx.Lock()
		for _, b := range tr.batches {
			i.headBlock.Append(tr.traceID, b)
		}
		i.blocksMtx.Unlock()
	}
	return nil
}

func (i *instance) CutBlockIfReady(maxBlockLifetime time.Duration, immediate bool) (string, error) {
	i.blocksMtx.Lock()
	defer i.blocksMtx.Unlock()

	if i.headBlock == nil || i.headBlock.DataLength() == 0 {
		return "", nil
	}
	ready := i.headBlock.DataLength() >= i.maxBlockBytes ||
		time.Since(i.lastBlockCut) >= maxBlockLifetime ||
		i.liveTraceCount() >= i.maxLiveTraces
	if !ready && !immediate {
		return "", nil
	}
	completing := i.headBlock
	i.completingBlocks = append(i.completingBlocks, completing)
	i.headBlock = &headBlock{blockID: fmt.Sprintf("b-%d", len(i.completingBlocks)), objects: map[string][]byte{}}
	i.lastBlockCut = time.Now()
	return completing.blockID, nil
}

func TestProbe(t *testing.T) {
	inst := newInstance("single-tenant")
	inst.headBlock.Append([]byte("seed"), []byte("x"))
	inst.PushBytes(1, []byte("trace-1"), []byte("batch-a"))

	cutStarted := make(chan struct{})
	blockCutHeld := make(chan struct{})
	inst.beforeAppendFn = func() {
		close(cutStarted)
		<-blockCutHeld
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := inst.CutCompleteTraces(0, true); err != nil {
			t.Error(err)
		}
	}()
	go func() {
		defer wg.Done()
		<-cutStarted
		go func() {
			time.Sleep(50 * time.Millisecond)
			close(blockCutHeld)
		}()
		if _, err := inst.CutBlockIfReady(time.Hour, false); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
}
