// Fixed twin (PR #270 applied).
// Project: ovn-org/libovsdb (OVSDB client library vendored by ovn-kubernetes),
// main branch Dec 2021. Files: cache/cache.go (RowCache.RowByModel, Row,
// Update; TableCache.Table, Populate2), client/api.go (api.Get),
// model/mapper (DatabaseModel.NewModelInfo, Info.FieldByColumn).
// Fix: ovn-org/libovsdb PR #270 "cache: don't let RowByModel() recursively
// lock the RowCache" (Dan Williams), picked up by ovn-kubernetes.
//
// RowByModel read-locks the RowCache, resolves the model's _uuid (or walks
// the schema indexes to find the UUID) and then returns r.Row(uuid). Row is
// the exported accessor and read-locks the same RWMutex again. In
// ovn-kubernetes a controller goroutine calls client.Get -> api.Get ->
// RowByModel while the monitor goroutine applies an update from the
// northbound database (TableCache.Populate2 -> RowCache.Update), which needs
// the write lock. Once that writer is queued behind the first read lock,
// Go's RWMutex refuses new readers, so the nested RLock in Row blocks
// forever and the writer waits for the outer read lock: goroutine 59 in the
// PR's dump stays in RowCache.Row, goroutine 174 in the Lock. The fix adds an
// unexported rowByUUID helper ("caller must hold the row cache lock") and
// RowByModel calls it instead of Row.
package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// ---- model / mapper ----

type Model interface{}

type Info struct{ obj reflect.Value }

func (i *Info) FieldByColumn(column string) (interface{}, error) {
	t := i.obj.Type()
	for f := 0; f < t.NumField(); f++ {
		if t.Field(f).Tag.Get("ovsdb") == column {
			return i.obj.Field(f).Interface(), nil
		}
	}
	return nil, fmt.Errorf("column %s not found", column)
}

type DatabaseModel struct{ types map[string]reflect.Type }

func (db *DatabaseModel) NewModelInfo(m Model) (*Info, error) {
	time.Sleep(30 * time.Millisecond) // reflection over the model's fields
	return &Info{obj: reflect.ValueOf(m).Elem()}, nil
}

func Clone(m Model) Model {
	v := reflect.New(reflect.TypeOf(m).Elem())
	v.Elem().Set(reflect.ValueOf(m).Elem())
	return v.Interface()
}

type LogicalSwitch struct {
	UUID string `ovsdb:"_uuid"`
	Name string `ovsdb:"name"`
}

// ---- cache ----

type index string
type valueToUUID map[interface{}]string
type columnToValue map[index]valueToUUID

type RowCache struct {
	name     string
	dbModel  *DatabaseModel
	dataType reflect.Type
	cache    map[string]Model
	indexes  columnToValue
	mutex    sync.RWMutex
}

func valueFromIndex(info *Info, idx index) (interface{}, error) {
	return info.FieldByColumn(string(idx))
}

// rowByUUID returns one model from the cache by UUID. Caller must hold the row
// cache lock.
func (r *RowCache) rowByUUID(uuid string) Model {
	if row, ok := r.cache[uuid]; ok {
		return Clone(row)
	}
	return nil
}

// Row returns one model from the cache by UUID
func (r *RowCache) Row(uuid string) Model {
	r.mutex.RLock()
	defer r.mutex.RUnlock()
	return r.rowByUUID(uuid)
}

// RowByModel searches the cache using a the indexes for a provided model
func (r *RowCache) RowByModel(m Model) Model {
	r.mutex.RLock()
	defer r.mutex.RUnlock()
	if reflect.TypeOf(m) != r.dataType {
		return nil
	}
	info, _ := r.dbModel.NewModelInfo(m)
	uuid, err := info.FieldByColumn("_uuid")
	if err != nil {
		return nil
	}
	if uuid.(string) != "" {
		return r.rowByUUID(uuid.(string))
	}
	for index := range r.indexes {
		val, err := valueFromIndex(info, index)
		if err != nil {
			continue
		}
		if uuid, ok := r.indexes[index][val]; ok {
			return r.rowByUUID(uuid)
		}
	}
	return nil
}

// Update updates the content in the cache
func (r *RowCache) Update(uuid string, m Model, checkIndexes bool) error {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	r.cache[uuid] = Clone(m)
	return nil
}

type TableCache struct {
	cache map[string]*RowCache
	mutex sync.RWMutex
}

func (t *TableCache) Table(name string) *RowCache {
	t.mutex.RLock()
	defer t.mutex.RUnlock()
	return t.cache[name]
}

// Populate2 applies a monitor_cond update to the cache
func (t *TableCache) Populate2(table string, updates map[string]Model) error {
	for uuid, row := range updates {
		tCache := t.Table(table)
		if err := tCache.Update(uuid, row, false); err != nil {
			return err
		}
	}
	return nil
}

// ---- client ----

var ErrNotFound = errors.New("object not found")

type api struct{ cache *TableCache }

func (a api) Get(ctx context.Context, m Model) error {
	tableCache := a.cache.Table("Logical_Switch")
	found := tableCache.RowByModel(m)
	if found == nil {
		return ErrNotFound
	}
	reflect.ValueOf(m).Elem().Set(reflect.ValueOf(found).Elem())
	return nil
}

func main() {
	ls := &LogicalSwitch{UUID: "7c1b0c4e-ls-node1", Name: "ovn-worker"}
	rc := &RowCache{name: "Logical_Switch", dbModel: &DatabaseModel{}, dataType: reflect.TypeOf(ls),
		cache:   map[string]Model{ls.UUID: ls},
		indexes: columnToValue{"name": valueToUUID{"ovn-worker": ls.UUID}}}
	tc := &TableCache{cache: map[string]*RowCache{"Logical_Switch": rc}}
	nbClient := api{cache: tc}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // ovnkube-master: look up the node switch by name
		defer wg.Done()
		sw := &LogicalSwitch{Name: "ovn-worker"}
		err := nbClient.Get(context.Background(), sw)
		fmt.Println("get:", sw.UUID, err)
	}()
	go func() { // libovsdb monitor: update2 from the NB database
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		fmt.Println("populate:", tc.Populate2("Logical_Switch", map[string]Model{ls.UUID: &LogicalSwitch{UUID: ls.UUID, Name: "ovn-worker"}}))
	}()
	wg.Wait()
}
