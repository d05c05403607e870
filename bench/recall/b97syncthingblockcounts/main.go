// Project: syncthing/syncthing (lib/model/devicedownloadstate.go deviceDownloadState.GetBlockCounts, lib/model/model.go Model.DownloadProgress), v0.13.x temporary indexes, May 2016 (PR #3194 "lib/model: Don't deadlock when returning temp index block counts"; code approximate).
// Bug: deviceDownloadState.GetBlockCounts read-locks t.mut and, when it finds the folder, returns straight out of the loop without RUnlock, so every DownloadProgress message leaks a read lock. The next progress update from that device for a folder it had not reported before reaches deviceDownloadState.Update, which needs t.mut.Lock() to add the folder and blocks forever on the read lock its own connection goroutine leaked (while holding the model's pmut), so the fix defers the RUnlock.
package main

import (
	"fmt"
	"sync"
)

// ---- lib/protocol ----
type DeviceID [4]byte

func (d DeviceID) String() string { return fmt.Sprintf("%X", d[:]) }

type Vector []uint64

func (v Vector) Equal(o Vector) bool {
	if len(v) != len(o) {
		return false
	}
	for i := range v {
		if v[i] != o[i] {
			return false
		}
	}
	return true
}

type FileDownloadProgressUpdateType int

const (
	UpdateTypeAppend FileDownloadProgressUpdateType = iota
	UpdateTypeForget
)

type FileDownloadProgressUpdate struct {
	UpdateType   FileDownloadProgressUpdateType
	Name         string
	Version      Vector
	BlockIndexes []int32
}

// ---- lib/model/devicedownloadstate.go ----
type deviceFolderFileDownloadState struct {
	blockIndexes []int32
	version      Vector
}

type deviceFolderDownloadState struct {
	mut   sync.RWMutex
	files map[string]deviceFolderFileDownloadState
}

func (p *deviceFolderDownloadState) Update(updates []FileDownloadProgressUpdate) {
	p.mut.Lock()
	defer p.mut.Unlock()
	for _, update := range updates {
		local, ok := p.files[update.Name]
		if update.UpdateType == UpdateTypeForget && ok && local.version.Equal(update.Version) {
			delete(p.files, update.Name)
		} else if update.UpdateType == UpdateTypeAppend {
			if !ok || !local.version.Equal(update.Version) {
				local = deviceFolderFileDownloadState{version: update.Version}
			}
			local.blockIndexes = append(local.blockIndexes, update.BlockIndexes...)
			p.files[update.Name] = local
		}
	}
}

// GetBlockCounts returns a map filename -> number of blocks downloaded.
func (p *deviceFolderDownloadState) GetBlockCounts() map[string]int {
	p.mut.RLock()
	res := make(map[string]int, len(p.files))
	for name, state := range p.files {
		res[name] = len(state.blockIndexes)
	}
	p.mut.RUnlock()
	return res
}

type deviceDownloadState struct {
	mut     sync.RWMutex
	folders map[string]*deviceFolderDownloadState
}

func (t *deviceDownloadState) Update(folder string, updates []FileDownloadProgressUpdate) {
	if t == nil {
		return
	}
	t.mut.RLock()
	f, ok := t.folders[folder]
	t.mut.RUnlock()
	if !ok {
		f = &deviceFolderDownloadState{files: make(map[string]deviceFolderFileDownloadState)}
		t.mut.Lock()
		t.folders[folder] = f
		t.mut.Unlock()
	}
	f.Update(updates)
}

// GetBlockCounts returns a map filename -> number of blocks downloaded for the
// given folder.
func (t *deviceDownloadState) GetBlockCounts(folder string) map[string]int {
	if t == nil {
		return nil
	}
	t.mut.RLock()
	for name, state := range t.folders {
		if name == folder {
			return state.GetBlockCounts()
		}
	}
	t.mut.RUnlock()
	return nil
}

func newDeviceDownloadState() *deviceDownloadState {
	return &deviceDownloadState{folders: make(map[string]*deviceFolderDownloadState)}
}

// ---- lib/model/model.go ----
type FolderConfiguration struct {
	ID                 string
	ReadOnly           bool
	DisableTempIndexes bool
	Devices            []DeviceID
}

type Model struct {
	fmut            sync.RWMutex // protects the below
	folderCfgs      map[string]FolderConfiguration
	pmut            sync.RWMutex // protects the below
	deviceDownloads map[DeviceID]*deviceDownloadState
	events          []string // events.Default.Log(events.RemoteDownloadProgress, ...)
}

func (m *Model) folderSharedWith(folder string, device DeviceID) bool {
	m.fmut.RLock()
	defer m.fmut.RUnlock()
	for _, d := range m.folderCfgs[folder].Devices {
		if d == device {
			return true
		}
	}
	return false
}

// DownloadProgress is called on the connection's reader goroutine for every
// DownloadProgress message of a peer that supports temporary indexes.
func (m *Model) DownloadProgress(device DeviceID, folder string, updates []FileDownloadProgressUpdate) {
	if !m.folderSharedWith(folder, device) {
		return
	}
	m.fmut.RLock()
	cfg, ok := m.folderCfgs[folder]
	m.fmut.RUnlock()
	if !ok || cfg.ReadOnly || cfg.DisableTempIndexes {
		return
	}
	m.pmut.RLock()
	m.deviceDownloads[device].Update(folder, updates)
	state := m.deviceDownloads[device].GetBlockCounts(folder)
	m.pmut.RUnlock()
	m.events = append(m.events, fmt.Sprintf("RemoteDownloadProgress device=%s folder=%s state=%v", device, folder, state))
}

type message struct {
	folder  string
	updates []FileDownloadProgressUpdate
}

func main() {
	peer := DeviceID{0x6e, 0x6f, 0x64, 0x65}
	m := &Model{
		folderCfgs: map[string]FolderConfiguration{
			"default": {ID: "default", Devices: []DeviceID{peer}},
			"photos":  {ID: "photos", Devices: []DeviceID{peer}},
		},
		deviceDownloads: map[DeviceID]*deviceDownloadState{peer: newDeviceDownloadState()},
	}
	// rawConnection.readerLoop -> model.DownloadProgress for every message.
	inbox := []message{
		{"default", []FileDownloadProgressUpdate{{Name: "a.iso", Version: Vector{1}, BlockIndexes: []int32{0, 1}}}},
		{"default", []FileDownloadProgressUpdate{{Name: "a.iso", Version: Vector{1}, BlockIndexes: []int32{2}}}},
		{"photos", []FileDownloadProgressUpdate{{Name: "img.jpg", Version: Vector{3}, BlockIndexes: []int32{0}}}},
	}
	done := make(chan struct{})
	go func() {
		for _, msg := range inbox {
			m.DownloadProgress(peer, msg.folder, msg.updates)
		}
		close(done)
	}()
	<-done
	for _, e := range m.events {
		fmt.Println(e)
	}
}
