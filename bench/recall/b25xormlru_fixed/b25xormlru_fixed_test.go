// Project: xorm.io/xorm (caches.LRUCacher)
// Bug: LRUCacher.GetIds took m.mutex.RLock for the lookup and, on finding an expired sql entry, called the exported DelIds, which takes m.mutex.Lock while the read lock is still held (RLock -> Lock upgrade on the same RWMutex).
// Fix: GetIds takes the write lock for the whole lookup (it mutates the LRU lists anyway) and uses the unlocked delIds helper.
package b25xormlru_fixed

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

var ErrCacheMiss = errors.New("xorm/cache: key not found")

type CacheStore interface {
	Put(key string, value interface{}) error
	Get(key string) (interface{}, error)
	Del(key string) error
}

type MemoryStore struct {
	store map[interface{}]interface{}
	mutex sync.RWMutex
}

func NewMemoryStore() *MemoryStore {
	return &MemoryStore{store: make(map[interface{}]interface{})}
}

func (s *MemoryStore) Put(key string, value interface{}) error {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	s.store[key] = value
	return nil
}

func (s *MemoryStore) Get(key string) (interface{}, error) {
	s.mutex.RLock()
	defer s.mutex.RUnlock()
	if v, ok := s.store[key]; ok {
		return v, nil
	}
	return nil, ErrCacheMiss
}

func (s *MemoryStore) Del(key string) error {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	delete(s.store, key)
	return nil
}

type sqlNode struct {
	tbName    string
	sql       string
	lastVisit time.Time
}

func genSQLKey(sql string, args interface{}) string {
	return fmt.Sprintf("%s-%v", sql, args)
}

type LRUCacher struct {
	idList         *list.List
	sqlList        *list.List
	idIndex        map[string]map[string]*list.Element
	sqlIndex       map[string]map[string]*list.Element
	store          CacheStore
	mutex          sync.RWMutex
	MaxElementSize int
	Expired        time.Duration
	GcInterval     time.Duration
}

func NewLRUCacher2(store CacheStore, expired time.Duration, maxElementSize int) *LRUCacher {
	return &LRUCacher{
		store:          store,
		idList:         list.New(),
		sqlList:        list.New(),
		Expired:        expired,
		GcInterval:     10 * time.Minute,
		MaxElementSize: maxElementSize,
		sqlIndex:       make(map[string]map[string]*list.Element),
		idIndex:        make(map[string]map[string]*list.Element),
	}
}

func (m *LRUCacher) PutIds(tableName, sql string, ids interface{}) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	if _, ok := m.sqlIndex[tableName]; !ok {
		m.sqlIndex[tableName] = make(map[string]*list.Element)
	}
	if el, ok := m.sqlIndex[tableName][sql]; !ok {
		el = m.sqlList.PushBack(&sqlNode{tbName: tableName, sql: sql, lastVisit: time.Now()})
		m.sqlIndex[tableName][sql] = el
	} else {
		el.Value.(*sqlNode).lastVisit = time.Now()
	}
	_ = m.store.Put(sql, ids)
	if m.sqlList.Len() > m.MaxElementSize {
		e := m.sqlList.Front()
		node := e.Value.(*sqlNode)
		m.delIds(node.tbName, node.sql)
	}
}

func (m *LRUCacher) GetIds(tableName, sql string) interface{} {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	if _, ok := m.sqlIndex[tableName]; !ok {
		return nil
	}
	v, err := m.store.Get(sql)
	if err != nil {
		return nil
	}
	if el, ok := m.sqlIndex[tableName][sql]; ok {
		lastTime := el.Value.(*sqlNode).lastVisit
		if lastTime.Add(m.Expired).Before(time.Now()) {
			m.delIds(tableName, sql)
			return nil
		}
		el.Value.(*sqlNode).lastVisit = time.Now()
	}
	return v
}

func (m *LRUCacher) delIds(tableName, sql string) {
	if _, ok := m.sqlIndex[tableName]; ok {
		if el, ok := m.sqlIndex[tableName][sql]; ok {
			delete(m.sqlIndex[tableName], sql)
			m.sqlList.Remove(el)
		}
	}
	_ = m.store.Del(sql)
}

func (m *LRUCacher) DelIds(tableName, sql string) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	m.delIds(tableName, sql)
}

func (m *LRUCacher) ClearIds(tableName string) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	for sql, el := range m.sqlIndex[tableName] {
		m.sqlList.Remove(el)
		_ = m.store.Del(sql)
	}
	m.sqlIndex[tableName] = map[string]*list.Element{}
}

func TestProbe(t *testing.T) {
	cacher := NewLRUCacher2(NewMemoryStore(), 20*time.Millisecond, 100)
	key := genSQLKey("SELECT `id` FROM `user` WHERE (`age` > ?)", []interface{}{18})
	cacher.PutIds("user", key, []int64{1, 2, 3})
	if ids := cacher.GetIds("user", key); ids == nil {
		t.Fatal("expected cached ids")
	}
	time.Sleep(30 * time.Millisecond)
	if ids := cacher.GetIds("user", key); ids != nil {
		t.Fatalf("expected expired entry, got %v", ids)
	}
	cacher.ClearIds("user")
}
