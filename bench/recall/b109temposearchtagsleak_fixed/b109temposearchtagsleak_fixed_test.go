// Project: grafana/tempo (modules/ingester/instance_search.go and instance.go), Tempo 2.x, fixed September 2025.
// Bug: instance.SearchTagsV2 takes headBlockMtx.RLock and returns the error of searching the head block before releasing it, so an invalid TraceQL query to /api/v2/search/tags leaks the read lock. The next CutCompleteTraces (writeTraceToHeadBlock) or CutBlockIfReady then blocks forever on headBlockMtx.Lock (PR #5607 "Deadlock on invalid query to api/v2/search/tags").
package b109temposearchtagsleakfixed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// traceql stand-ins.
func IsEmptyQuery(q string) bool { return strings.TrimSpace(q) == "" || q == "{}" }

type tagNamesCallback func(scope, tag string) bool

type Engine struct{}

func (Engine) ExecuteTagNames(_ context.Context, scope, query string, cb tagNamesCallback, fetch func(ctx context.Context, cb tagNamesCallback) error) error {
	if !strings.HasPrefix(query, "{") || !strings.HasSuffix(query, "}") {
		return fmt.Errorf("failed to parse TraceQL query: %q", query)
	}
	return fetch(context.Background(), cb)
}

// common.Searcher implemented by the head block.
type Searcher interface {
	SearchTags(ctx context.Context, scope string, cb tagNamesCallback) error
	FetchTagNames(ctx context.Context, cb tagNamesCallback) error
}

type headBlock struct{ traces map[string][]string }

func (b *headBlock) SearchTags(_ context.Context, scope string, cb tagNamesCallback) error {
	for _, tags := range b.traces {
		for _, tg := range tags {
			cb(scope, tg)
		}
	}
	return nil
}

func (b *headBlock) FetchTagNames(ctx context.Context, cb tagNamesCallback) error {
	return b.SearchTags(ctx, "span", cb)
}

type liveTrace struct {
	id   string
	tags []string
}

type instance struct {
	engine Engine

	tracesMtx  sync.Mutex
	liveTraces map[string]*liveTrace

	headBlockMtx sync.RWMutex
	headBlock    *headBlock

	blocksMtx        sync.RWMutex
	completingBlocks []Searcher
	completeBlocks   []Searcher
}

func (i *instance) PushBytes(id string, tags ...string) {
	i.tracesMtx.Lock()
	defer i.tracesMtx.Unlock()
	i.liveTraces[id] = &liveTrace{id: id, tags: tags}
}

func (i *instance) CutCompleteTraces(_ uint32, immediate bool) error {
	i.tracesMtx.Lock()
	var cut []*liveTrace
	for id, tr := range i.liveTraces {
		if immediate {
			cut = append(cut, tr)
			delete(i.liveTraces, id)
		}
	}
	i.tracesMtx.Unlock()
	for _, tr := range cut {
		if err := i.writeTraceToHeadBlock(tr); err != nil {
			return err
		}
	}
	return nil
}

func (i *instance) writeTraceToHeadBlock(tr *liveTrace) error {
	i.headBlockMtx.Lock()
	defer i.headBlockMtx.Unlock()
	i.headBlock.traces[tr.id] = tr.tags
	return nil
}

func (i *instance) SearchTagsV2(ctx context.Context, scope, query string) ([]string, error) {
	var mu sync.Mutex
	distinct := map[string]struct{}{}
	cb := func(_ string, tag string) bool {
		mu.Lock()
		distinct[tag] = struct{}{}
		mu.Unlock()
		return false
	}

	searchBlock := func(ctx context.Context, s Searcher, _ string) error {
		if IsEmptyQuery(query) {
			return s.SearchTags(ctx, scope, cb)
		}
		return i.engine.ExecuteTagNames(ctx, scope, query, cb, s.FetchTagNames)
	}

	i.headBlockMtx.RLock()
	err := searchBlock(ctx, i.headBlock, "headBlock")
	i.headBlockMtx.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("unexpected error searching head block: %w", err)
	}

	i.blocksMtx.RLock()
	defer i.blocksMtx.RUnlock()
	for _, b := range append(i.completingBlocks, i.completeBlocks...) {
		if err := searchBlock(ctx, b, "completeBlock"); err != nil {
			return nil, err
		}
	}

	res := make([]string, 0, len(distinct))
	for k := range distinct {
		res = append(res, k)
	}
	return res, nil
}

func TestB109temposearchtagsleakFixed(t *testing.T) {
	i := &instance{liveTraces: map[string]*liveTrace{}, headBlock: &headBlock{traces: map[string][]string{}}}
	i.PushBytes("trace-1", "service.name", "http.method")
	if err := i.CutCompleteTraces(0, true); err != nil {
		t.Fatal(err)
	}
	// GET /api/v2/search/tags?q=%7B%20span.foo%20%3D (an incomplete query).
	_, err := i.SearchTagsV2(context.Background(), "span", "{ span.foo = ")
	if err == nil {
		t.Fatal("expected parse error")
	}
	i.PushBytes("trace-2", "db.system")
	if err := i.CutCompleteTraces(0, true); err != nil {
		t.Fatal(err)
	}
}
