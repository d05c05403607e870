// Project: beego (session/sess_mem.go)
// Bug: MemProvider.SessionRead() holds pder.lock.RLock() while it refreshes the
// access time of an existing session by calling the exported
// pder.SessionUpdate(sid), which takes pder.lock.Lock() on the same RWMutex:
// Manager.SessionStart -> SessionRead (RLock) -> SessionUpdate (Lock) blocks
// forever on the second request carrying an existing session cookie.
// Fix: the refresh is done asynchronously ("go pder.SessionUpdate(sid)") after
// which SessionRead releases its read lock.

package b21beegosession

import (
	"container/list"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

type Store interface {
	Set(key, value interface{}) error
	Get(key interface{}) interface{}
	SessionID() string
}

type MemSessionStore struct {
	sid          string
	timeAccessed time.Time
	value        map[interface{}]interface{}
	lock         sync.RWMutex
}

func (st *MemSessionStore) Set(key, value interface{}) error {
	st.lock.Lock()
	defer st.lock.Unlock()
	st.value[key] = value
	return nil
}

func (st *MemSessionStore) Get(key interface{}) interface{} {
	st.lock.RLock()
	defer st.lock.RUnlock()
	return st.value[key]
}

func (st *MemSessionStore) SessionID() string { return st.sid }

type MemProvider struct {
	lock        sync.RWMutex
	sessions    map[string]*list.Element
	list        *list.List
	maxlifetime int64
	savePath    string
}

func (pder *MemProvider) SessionInit(maxlifetime int64, savePath string) error {
	pder.maxlifetime = maxlifetime
	pder.savePath = savePath
	return nil
}

func (pder *MemProvider) SessionRead(sid string) (Store, error) {
	pder.lock.RLock()
	if element, ok := pder.sessions[sid]; ok {
		pder.SessionUpdate(sid)
		pder.lock.RUnlock()
		return element.Value.(*MemSessionStore), nil
	}
	pder.lock.RUnlock()

	pder.lock.Lock()
	newsess := &MemSessionStore{sid: sid, timeAccessed: time.Now(), value: make(map[interface{}]interface{})}
	element := pder.list.PushFront(newsess)
	pder.sessions[sid] = element
	pder.lock.Unlock()
	return newsess, nil
}

func (pder *MemProvider) SessionExist(sid string) bool {
	pder.lock.RLock()
	defer pder.lock.RUnlock()
	_, ok := pder.sessions[sid]
	return ok
}

func (pder *MemProvider) SessionUpdate(sid string) error {
	pder.lock.Lock()
	defer pder.lock.Unlock()
	if element, ok := pder.sessions[sid]; ok {
		element.Value.(*MemSessionStore).timeAccessed = time.Now()
		pder.list.MoveToFront(element)
	}
	return nil
}

func (pder *MemProvider) SessionDestroy(sid string) error {
	pder.lock.Lock()
	defer pder.lock.Unlock()
	if element, ok := pder.sessions[sid]; ok {
		delete(pder.sessions, sid)
		pder.list.Remove(element)
	}
	return nil
}

type Manager struct {
	provider   *MemProvider
	cookieName string
	maxAge     int
}

func NewManager(cookieName string, gclifetime int64) *Manager {
	p := &MemProvider{list: list.New(), sessions: make(map[string]*list.Element)}
	_ = p.SessionInit(gclifetime, "")
	return &Manager{provider: p, cookieName: cookieName, maxAge: int(gclifetime)}
}

func (manager *Manager) SessionStart(w http.ResponseWriter, r *http.Request) (Store, error) {
	sid := "fixed-sid-0001"
	if c, err := r.Cookie(manager.cookieName); err == nil && c.Value != "" {
		sid = c.Value
	}
	session, err := manager.provider.SessionRead(sid)
	if err != nil {
		return nil, err
	}
	http.SetCookie(w, &http.Cookie{Name: manager.cookieName, Value: sid, MaxAge: manager.maxAge, HttpOnly: true})
	return session, nil
}

func TestSessionStartWithExistingCookie(t *testing.T) {
	manager := NewManager("beegosessionID", 3600)
	handler := func(w http.ResponseWriter, r *http.Request) {
		sess, err := manager.SessionStart(w, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = sess.Set("username", "astaxie")
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		// first request creates the session
		w := httptest.NewRecorder()
		handler(w, httptest.NewRequest("GET", "/", nil))

		// second request comes back with the cookie
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(&http.Cookie{Name: "beegosessionID", Value: "fixed-sid-0001"})
		handler(httptest.NewRecorder(), r)
	}()
	<-done
}
