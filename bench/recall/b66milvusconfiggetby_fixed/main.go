// Shape of milvus pkg/config: the config manager and an etcd config source.
package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

var ErrKeyNotFound = errors.New("key not found")

type Event struct {
	EventSource string
	Key         string
	Value       string
}

type EventHandler interface {
	OnEvent(event *Event)
}

type Source interface {
	GetConfigurations() (map[string]string, error)
	GetConfigurationByKey(string) (string, error)
	GetSourceName() string
	SetEventHandler(EventHandler)
}

// EtcdSource serves keys from etcd; an uncached key costs a round trip.
type EtcdSource struct {
	mu           sync.RWMutex
	currentConfs map[string]string
	handler      EventHandler
}

func (es *EtcdSource) GetSourceName() string          { return "EtcdSource" }
func (es *EtcdSource) SetEventHandler(h EventHandler) { es.handler = h }
func (es *EtcdSource) GetConfigurations() (map[string]string, error) {
	es.mu.RLock()
	defer es.mu.RUnlock()
	out := make(map[string]string, len(es.currentConfs))
	for k, v := range es.currentConfs {
		out[k] = v
	}
	return out, nil
}

func (es *EtcdSource) GetConfigurationByKey(key string) (string, error) {
	time.Sleep(15 * time.Millisecond) // etcd round trip
	es.mu.RLock()
	defer es.mu.RUnlock()
	v, ok := es.currentConfs[key]
	if !ok {
		return "", ErrKeyNotFound
	}
	return v, nil
}

// refreshConfigurations runs on the source's refresh ticker.
func (es *EtcdSource) refreshConfigurations(key, value string) {
	es.mu.Lock()
	es.currentConfs[key] = value
	es.mu.Unlock()
	es.handler.OnEvent(&Event{EventSource: es.GetSourceName(), Key: key, Value: value})
}

type Filter func(key string) (string, bool)

func WithPrefix(prefix string) Filter {
	return func(key string) (string, bool) { return key, strings.HasPrefix(key, prefix) }
}

type Manager struct {
	sync.RWMutex
	sources      map[string]Source
	keySourceMap map[string]string
	overlays     map[string]string
}

func NewManager() *Manager {
	return &Manager{sources: map[string]Source{}, keySourceMap: map[string]string{}, overlays: map[string]string{}}
}

func (m *Manager) AddSource(s Source) {
	m.Lock()
	defer m.Unlock()
	m.sources[s.GetSourceName()] = s
	confs, _ := s.GetConfigurations()
	for k := range confs {
		m.keySourceMap[k] = s.GetSourceName()
	}
	s.SetEventHandler(m)
}

func (m *Manager) GetConfig(key string) (string, error) {
	m.RLock()
	defer m.RUnlock()
	return m.getConfig(key)
}

// getConfig requires the caller to hold the manager's lock.
func (m *Manager) getConfig(key string) (string, error) {
	if v, ok := m.overlays[key]; ok {
		return v, nil
	}
	sourceName, ok := m.keySourceMap[key]
	if !ok {
		return "", ErrKeyNotFound
	}
	return m.getConfigValueBySource(key, sourceName)
}

func (m *Manager) getConfigValueBySource(key, sourceName string) (string, error) {
	source, ok := m.sources[sourceName]
	if !ok {
		return "", ErrKeyNotFound
	}
	return source.GetConfigurationByKey(key)
}

// GetBy returns the configs whose keys pass all filters.
func (m *Manager) GetBy(filters ...Filter) map[string]string {
	m.RLock()
	defer m.RUnlock()
	keys := make([]string, 0, len(m.keySourceMap))
	for k := range m.keySourceMap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	matched := map[string]string{}
	for _, key := range keys {
		ok := true
		for _, f := range filters {
			if _, ok = f(key); !ok {
				break
			}
		}
		if !ok {
			continue
		}
		if v, err := m.getConfig(key); err == nil {
			matched[key] = v
		}
	}
	return matched
}

func (m *Manager) OnEvent(event *Event) {
	m.Lock()
	defer m.Unlock()
	m.keySourceMap[event.Key] = event.EventSource
}

func main() {
	es := &EtcdSource{currentConfs: map[string]string{
		"querynode.gracefulstoptimeout": "30",
		"querynode.segcore.chunkrows":   "1024",
		"datacoord.segment.maxsize":     "512",
	}}
	m := NewManager()
	m.AddSource(es)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // paramtable refresh of the querynode component
		defer wg.Done()
		fmt.Println("querynode configs:", m.GetBy(WithPrefix("querynode.")))
	}()
	go func() { // etcd watch fires
		defer wg.Done()
		time.Sleep(8 * time.Millisecond)
		es.refreshConfigurations("querynode.segcore.chunkrows", "2048")
	}()
	wg.Wait()
}
