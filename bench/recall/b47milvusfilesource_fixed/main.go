// milvus-io/milvus 2.3 (Jan 2024): pkg/config/file_source.go (FileSource.
// loadFromFile, GetConfigurationByKey), refresher.go (refreshPeriodically,
// fireEvents), manager.go (OnEvent, GetConfig, getConfigValueBySource),
// event_dispatcher.go (Dispatch), paramtable watchers. Issue #30219 "dead lock
// while getting configs", fixed by PR #30318 / #30319 (shape of PR #29995).
//
// The file source re-reads milvus.yaml on a ticker. loadFromFile write-locks
// the FileSource (its embedded RWMutex) and, still holding it, fires the
// change events to the Manager, which dispatches them to the key's handlers.
// A watcher reads the new value through its ParamItem -> Manager.GetConfig ->
// the Source interface's GetConfigurationByKey on the same FileSource, which
// read-locks it: the refresh goroutine hangs, and every later config read
// with it. The fix swaps the map under the lock and fires the events after
// releasing it. This is the fixed version.
package main

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var ErrKeyNotFound = errors.New("key not found")

type Event struct {
	EventSource, Key, Value string
	HasUpdated              bool
}

type EventHandler interface{ OnEvent(event *Event) }
type Source interface {
	GetConfigurationByKey(string) (string, error)
	GetConfigurations() map[string]string
	SetEventHandler(EventHandler)
}

func PopulateEvents(source string, current, target map[string]string) []*Event {
	var events []*Event
	for k, v := range target {
		if old, ok := current[k]; !ok || old != v {
			events = append(events, &Event{EventSource: source, Key: k, Value: v})
		}
	}
	return events
}

type refresher struct {
	refreshInterval time.Duration
	eh              EventHandler
	fetchFunc       func() error
}

func (r *refresher) refreshPeriodically() {
	for range time.Tick(r.refreshInterval) {
		_ = r.fetchFunc() // logged and retried on the next tick
	}
}

func (r *refresher) fireEvents(events ...*Event) {
	for _, e := range events {
		if r.eh != nil {
			r.eh.OnEvent(e)
		}
	}
}

type FileSource struct {
	sync.RWMutex
	files           []string
	configs         map[string]string
	updateMu        sync.Mutex
	configRefresher *refresher
	readYaml        func(file string) map[string]string // os.ReadFile + yaml.Unmarshal
}

func (fs *FileSource) GetConfigurationByKey(key string) (string, error) {
	fs.RLock()
	defer fs.RUnlock()
	if v, ok := fs.configs[key]; ok {
		return v, nil
	}
	return "", ErrKeyNotFound
}

func (fs *FileSource) GetConfigurations() map[string]string {
	_ = fs.loadFromFile()
	go fs.configRefresher.refreshPeriodically()
	fs.RLock()
	defer fs.RUnlock()
	return maps.Clone(fs.configs)
}

func (fs *FileSource) SetEventHandler(eh EventHandler) {
	fs.Lock()
	defer fs.Unlock()
	fs.configRefresher.eh = eh
}

func (fs *FileSource) loadFromFile() error {
	newConfig := make(map[string]string)
	for _, f := range fs.files {
		for k, v := range fs.readYaml(f) {
			newConfig[strings.ToLower(k)] = v
		}
	}
	return fs.update(newConfig)
}

func (fs *FileSource) update(configs map[string]string) error { // updateMu serializes refreshes
	fs.updateMu.Lock()
	defer fs.updateMu.Unlock()
	fs.Lock()
	events := PopulateEvents("FileSource", fs.configs, configs)
	fs.configs = configs
	fs.Unlock()
	fs.configRefresher.fireEvents(events...)
	return nil
}

type EventDispatcher struct{ registry map[string][]func(*Event) }

func (ed *EventDispatcher) Dispatch(event *Event) {
	for _, h := range ed.registry[event.Key] {
		h(event)
	}
}

type Manager struct { // maps are typeutil.ConcurrentMap (sync.Map) values
	Dispatcher   *EventDispatcher
	sources      sync.Map // source name -> Source
	keySourceMap sync.Map // key -> source name
}

func (m *Manager) AddSource(name string, source Source) {
	m.sources.Store(name, source)
	for k := range source.GetConfigurations() {
		m.keySourceMap.Store(k, name)
	}
	source.SetEventHandler(m)
}

func (m *Manager) GetConfig(key string) (string, error) {
	realKey := strings.ToLower(key)
	sourceName, ok := m.keySourceMap.Load(realKey)
	if !ok {
		return "", ErrKeyNotFound
	}
	return m.getConfigValueBySource(realKey, sourceName.(string))
}

func (m *Manager) getConfigValueBySource(configKey, sourceName string) (string, error) {
	source, ok := m.sources.Load(sourceName)
	if !ok {
		return "", ErrKeyNotFound
	}
	return source.(Source).GetConfigurationByKey(configKey)
}

func (m *Manager) OnEvent(event *Event) {
	if !event.HasUpdated { // updateEvent
		m.keySourceMap.Store(event.Key, event.EventSource)
		event.HasUpdated = true
	}
	m.Dispatcher.Dispatch(event)
}

type ParamItem struct { // paramtable's view of one key
	Key     string
	manager *Manager
}

func (pi *ParamItem) GetValue() string {
	v, _ := pi.manager.GetConfig(pi.Key)
	return v
}

func main() {
	var version atomic.Value
	version.Store("5")
	fs := &FileSource{files: []string{"milvus.yaml"}, configs: map[string]string{}}
	fs.readYaml = func(string) map[string]string {
		return map[string]string{"queryNode.gracefulStopTimeout": version.Load().(string)}
	}
	fs.configRefresher = &refresher{refreshInterval: 50 * time.Millisecond, fetchFunc: fs.loadFromFile}

	mgr := &Manager{Dispatcher: &EventDispatcher{registry: map[string][]func(*Event){}}}
	gracefulStop := &ParamItem{Key: "queryNode.gracefulStopTimeout", manager: mgr}
	seen := make(chan string, 1)
	mgr.Dispatcher.registry["querynode.gracefulstoptimeout"] = []func(*Event){func(*Event) {
		seen <- gracefulStop.GetValue() // the query node's watcher reads the new value
	}}
	mgr.AddSource("FileSource", fs)

	version.Store("30") // milvus.yaml edited on disk; the next tick picks it up
	fmt.Println("gracefulStopTimeout refreshed to", <-seen)
}
