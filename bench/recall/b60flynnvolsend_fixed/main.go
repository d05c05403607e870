// Project: flynn/flynn (flynn-host, the per-host container daemon), 2016-2017.
// Files/functions: host/volume/manager/manager.go (Manager.SendSnapshot,
// Manager.ReceiveSnapshot, Manager.Volumes, Manager.ListHaves, LockDB/UnlockDB),
// host/volume/api/http.go (HTTPAPI.Send, HTTPAPI.List), host/volume (Volume,
// Provider interfaces).
// Fix: flynn/flynn PR #4088 "host/volume/manager: Fix cases that could leave mutex locked".
//
// When another host pulls a volume snapshot it calls this host's
// "GET /storage/volumes/:id/send" endpoint. HTTPAPI.Send hands the request to
// the volume manager's SendSnapshot, which locks m.mutex to look the volume
// up and unlocks it before streaming, so the manager is not locked for the
// whole send. But when the volume does not exist (it was destroyed, or the
// peer asked for a stale snapshot id) SendSnapshot returns
// volume.ErrNoSuchVolume straight away with m.mutex still locked.
// ReceiveSnapshot has the same early returns. The handler answers 404 and
// the daemon keeps running, but the next call into the manager (listing
// volumes, creating the volume of a new job, ListHaves) blocks in
// m.mutex.Lock forever. The fix releases the mutex on those error returns.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

var ErrNoSuchVolume = errors.New("no such volume")

type Info struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

type Volume interface {
	Info() *Info
	Provider() Provider
}

type Provider interface {
	Kind() string
	SendSnapshot(vol Volume, haves []json.RawMessage, stream io.Writer) error
	ReceiveSnapshot(vol Volume, stream io.Reader) (Volume, error)
}

type zfsVolume struct {
	info     *Info
	provider Provider
}

func (v *zfsVolume) Info() *Info        { return v.info }
func (v *zfsVolume) Provider() Provider { return v.provider }

type zfsProvider struct{}

func (zfsProvider) Kind() string { return "zfs" }
func (zfsProvider) SendSnapshot(vol Volume, haves []json.RawMessage, stream io.Writer) error {
	_, err := fmt.Fprintf(stream, "zfs send %s\n", vol.Info().ID)
	return err
}
func (p zfsProvider) ReceiveSnapshot(vol Volume, stream io.Reader) (Volume, error) {
	return &zfsVolume{info: &Info{ID: vol.Info().ID + "@recv", Type: "data"}, provider: p}, nil
}

type Manager struct {
	mutex     sync.Mutex
	providers map[string]Provider
	volumes   map[string]Volume
	dbMtx     sync.RWMutex
	dbOpen    bool
}

func (m *Manager) LockDB() error {
	m.dbMtx.RLock()
	if !m.dbOpen {
		m.dbMtx.RUnlock()
		return errors.New("volume persistence db is closed")
	}
	return nil
}

func (m *Manager) UnlockDB() { m.dbMtx.RUnlock() }

func (m *Manager) Volumes() map[string]Volume {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	r := make(map[string]Volume)
	for k, v := range m.volumes {
		r[k] = v
	}
	return r
}

func (m *Manager) SendSnapshot(id string, haves []json.RawMessage, stream io.Writer) error {
	m.mutex.Lock()
	vol := m.volumes[id]
	m.mutex.Unlock() // don't lock the manager for the duration of the send operation.
	if vol == nil {
		return ErrNoSuchVolume
	}
	return vol.Provider().SendSnapshot(vol, haves, stream)
}

func (m *Manager) ReceiveSnapshot(id string, stream io.Reader) (Volume, error) {
	m.mutex.Lock()
	vol := m.volumes[id]
	m.mutex.Unlock() // don't lock the manager for the duration of the recv operation.
	if vol == nil {
		return nil, ErrNoSuchVolume
	}
	if err := m.LockDB(); err != nil {
		return nil, err
	}
	defer m.UnlockDB()
	snap, err := vol.Provider().ReceiveSnapshot(vol, stream)
	if err != nil {
		return nil, err
	}
	m.mutex.Lock()
	defer m.mutex.Unlock()
	m.volumes[snap.Info().ID] = snap
	return snap, nil
}

type Params map[string]string

func (ps Params) ByName(name string) string { return ps[name] }

type HTTPAPI struct{ vman *Manager }

func (api *HTTPAPI) List(w http.ResponseWriter, r *http.Request, ps Params) {
	vols := api.vman.Volumes()
	infos := make([]*Info, 0, len(vols))
	for _, v := range vols {
		infos = append(infos, v.Info())
	}
	json.NewEncoder(w).Encode(infos)
}

func (api *HTTPAPI) Send(w http.ResponseWriter, r *http.Request, ps Params) {
	volumeID := ps.ByName("volume_id")
	var haves []json.RawMessage
	err := api.vman.SendSnapshot(volumeID, haves, w)
	if err != nil {
		switch err {
		case ErrNoSuchVolume:
			http.Error(w, fmt.Sprintf("no volume with id %q", volumeID), http.StatusNotFound)
		default:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}
}

func main() {
	p := zfsProvider{}
	vman := &Manager{
		providers: map[string]Provider{"default": p},
		volumes:   map[string]Volume{"v1": &zfsVolume{info: &Info{ID: "v1", Type: "data"}, provider: p}},
		dbOpen:    true,
	}
	api := &HTTPAPI{vman: vman}

	// a peer host asks for a snapshot that was destroyed in the meantime
	rec := httptest.NewRecorder()
	api.Send(rec, httptest.NewRequest("GET", "/storage/volumes/gone/send", nil), Params{"volume_id": "gone"})
	fmt.Print("send: ", rec.Code, " ", rec.Body.String())

	// the next request that needs the volume manager
	rec = httptest.NewRecorder()
	api.List(rec, httptest.NewRequest("GET", "/storage/volumes", nil), nil)
	fmt.Print("list: ", rec.Body.String())
	fmt.Println("exited cleanly")
}
