// Project: kedacore/keda (pkg/scaling/scale_handler.go)
// Bug: scaleHandler.performGetScalersCache looks the cache up under
//      scalerCachesLock.RLock(); when it finds an entry for an older
//      generation it takes scalerCachesLock.Lock() to replace it while the
//      read lock is still held, so the goroutine blocks on itself (and every
//      other reconciler then queues behind the pending writer).
// Fix: release the read lock before taking the write lock and re-check the
//      cache entry under the write lock.

package b22kedacache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

type Scaler interface {
	GetMetricsAndActivity(ctx context.Context, metricName string) (float64, bool, error)
	Close(ctx context.Context) error
}

type cpuScaler struct{ target float64 }

func (s *cpuScaler) GetMetricsAndActivity(context.Context, string) (float64, bool, error) {
	return s.target, s.target > 0, nil
}
func (s *cpuScaler) Close(context.Context) error { return nil }

type ScalersCache struct {
	ScaledObject             *ScaledObject
	Scalers                  []Scaler
	ScalableObjectGeneration int64
	Recorder                 func(reason, msg string)
}

func (c *ScalersCache) Close(ctx context.Context) {
	for _, s := range c.Scalers {
		_ = s.Close(ctx)
	}
}

type ScaledObject struct {
	Namespace, Name string
	Generation      int64
	Triggers        []string
}

func (so *ScaledObject) GenerateIdentifier() string {
	return fmt.Sprintf("scaledobject.%s.%s", so.Namespace, so.Name)
}

type scaleHandler struct {
	scaleLoopContexts *sync.Map
	scalerCaches      map[string]*ScalersCache
	scalerCachesLock  *sync.RWMutex
	buildScalers      func(ctx context.Context, so *ScaledObject) ([]Scaler, error)
	recorder          func(reason, msg string)
}

func NewScaleHandler() *scaleHandler {
	return &scaleHandler{
		scaleLoopContexts: &sync.Map{},
		scalerCaches:      map[string]*ScalersCache{},
		scalerCachesLock:  &sync.RWMutex{},
		recorder:          func(string, string) {},
		buildScalers: func(ctx context.Context, so *ScaledObject) ([]Scaler, error) {
			var ss []Scaler
			for range so.Triggers {
				ss = append(ss, &cpuScaler{target: 50})
			}
			return ss, nil
		},
	}
}

func (h *scaleHandler) GetScalersCache(ctx context.Context, so *ScaledObject) (*ScalersCache, error) {
	return h.performGetScalersCache(ctx, so.GenerateIdentifier(), so)
}

func (h *scaleHandler) performGetScalersCache(ctx context.Context, key string, so *ScaledObject) (*ScalersCache, error) {
	h.scalerCachesLock.RLock()
	if cache, ok := h.scalerCaches[key]; ok {
		if cache.ScalableObjectGeneration == so.Generation {
			h.scalerCachesLock.RUnlock()
			return cache, nil
		}
		h.recorder("KEDAScalersCacheStale", fmt.Sprintf("generation %d -> %d", cache.ScalableObjectGeneration, so.Generation))
		h.scalerCachesLock.Lock()
		cache.Close(ctx)
		delete(h.scalerCaches, key)
		h.scalerCachesLock.Unlock()
	}
	h.scalerCachesLock.RUnlock()

	scalers, err := h.buildScalers(ctx, so)
	if err != nil {
		return nil, err
	}
	newCache := &ScalersCache{ScaledObject: so, Scalers: scalers, ScalableObjectGeneration: so.Generation, Recorder: h.recorder}

	h.scalerCachesLock.Lock()
	defer h.scalerCachesLock.Unlock()
	if cache, ok := h.scalerCaches[key]; ok {
		cache.Close(ctx)
	}
	h.scalerCaches[key] = newCache
	return newCache, nil
}

func (h *scaleHandler) ClearScalersCache(ctx context.Context, so *ScaledObject) error {
	key := so.GenerateIdentifier()
	h.scalerCachesLock.Lock()
	defer h.scalerCachesLock.Unlock()
	if cache, ok := h.scalerCaches[key]; ok {
		cache.Close(ctx)
		delete(h.scalerCaches, key)
	}
	return nil
}

func (h *scaleHandler) checkScalers(ctx context.Context, so *ScaledObject) (bool, error) {
	cache, err := h.GetScalersCache(ctx, so)
	if err != nil {
		return false, err
	}
	active := false
	for _, s := range cache.Scalers {
		_, a, err := s.GetMetricsAndActivity(ctx, "s0-cpu")
		if err != nil {
			return false, err
		}
		active = active || a
	}
	return active, nil
}

func TestProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := NewScaleHandler()
	h.recorder = func(reason, msg string) { t.Logf("%s: %s", reason, msg) }
	so := &ScaledObject{Namespace: "default", Name: "worker", Generation: 1, Triggers: []string{"cpu"}}
	if _, err := h.checkScalers(ctx, so); err != nil {
		t.Fatal(err)
	}
	so.Generation = 2
	so.Triggers = append(so.Triggers, "memory")
	active, err := h.checkScalers(ctx, so)
	if err != nil || !active {
		t.Fatalf("active=%v err=%v", active, err)
	}
}
