// Project: syncthing/syncthing, lib/model/model.go (Model.Availability, Model.RemoveFolder,
// Model.NeedSize), v0.14.x (autumn 2016).
// Issue: syncthing/syncthing#3634 (deadlock); fixed by PR #3714
// "lib/model: Fix locking order in Availability() (fixes #3634)".
//
// The model's two locks are ordered fmut before pmut: RemoveFolder, run when a folder is
// removed from the configuration, takes fmut.Lock and then pmut.Lock (line 91).
// Availability, which the puller asks for every block it needs, took them the other way:
// pmut.RLock first "as the value returned from foldersFiles can get heavily modified on
// Close()", then fmut.RLock (line 130). A puller holding pmut for reading and waiting for
// fmut, and RemoveFolder holding fmut and waiting for pmut, wait for each other forever.
// main lines it up the way a busy instance does: the GUI's NeedSize holds fmut.RLock during
// a long database scan, RemoveFolder queues for fmut.Lock behind it, the puller takes
// pmut.RLock and queues for fmut.RLock behind the writer; when the scan ends the writer
// gets fmut and then needs the pmut the puller holds.
//
// FIXED twin: the PR's fix, Availability takes fmut.RLock (line 130) before
// pmut.RLock (line 131) and releases fmut early.
package main

import (
	"fmt"
	"sync"
	"time"
)

type DeviceID string

// ---- lib/db ----

type FileInfo struct {
	Name string
	Size int64
}

type FileSet struct {
	folder  string
	have    map[DeviceID][]FileInfo
	globals []FileInfo
}

// WithNeedTruncated iterates the files the device needs (a database scan).
func (s *FileSet) WithNeedTruncated(device DeviceID, fn func(FileInfo) bool) {
	for _, f := range s.globals {
		time.Sleep(50 * time.Millisecond) // leveldb iteration
		if !fn(f) {
			return
		}
	}
}

// Availability returns the devices that have the latest version of the file.
func (s *FileSet) Availability(file string) []DeviceID {
	var devs []DeviceID
	for dev, files := range s.have {
		for _, f := range files {
			if f.Name == file {
				devs = append(devs, dev)
			}
		}
	}
	return devs
}

// ---- lib/model ----

type Availability struct {
	ID            DeviceID
	FromTemporary bool
}

type deviceDownloadState struct{ files map[string]bool }

func (s *deviceDownloadState) Has(folder, file string) bool { return s != nil && s.files[file] }

type Connection interface{ Close() }

type Model struct {
	folderFiles   map[string]*FileSet
	folderDevices map[string][]DeviceID
	deviceFolders map[DeviceID][]string
	fmut          sync.RWMutex // protects the above

	conn            map[DeviceID]Connection
	deviceDownloads map[DeviceID]*deviceDownloadState
	pmut            sync.RWMutex // protects the above
}

func (m *Model) RemoveFolder(folder string) {
	m.fmut.Lock()
	m.pmut.Lock()

	// Close connections to affected devices
	for _, dev := range m.folderDevices[folder] {
		if conn, ok := m.conn[dev]; ok {
			conn.Close()
		}
	}

	// Clean up our config maps
	delete(m.folderFiles, folder)
	delete(m.folderDevices, folder)
	for dev, folders := range m.deviceFolders {
		m.deviceFolders[dev] = stringSliceWithout(folders, folder)
	}

	m.pmut.Unlock()
	m.fmut.Unlock()
}

// NeedSize returns the number and total size of currently needed files.
func (m *Model) NeedSize(folder string) (nfiles int, bytes int64) {
	m.fmut.RLock()
	defer m.fmut.RUnlock()
	if rf, ok := m.folderFiles[folder]; ok {
		rf.WithNeedTruncated("local", func(f FileInfo) bool {
			nfiles++
			bytes += f.Size
			return true
		})
	}
	return
}

func (m *Model) Availability(folder, file string) []Availability {
	// The slightly unusual locking sequence here is because we need to hold
	// pmut for the duration (as the value returned from foldersFiles can
	// get heavily modified on Close()), but also must acquire fmut before
	// pmut. (The locks can be *released* in any order.)
	m.fmut.RLock()
	m.pmut.RLock()
	defer m.pmut.RUnlock()

	fs, ok := m.folderFiles[folder]
	devices := m.folderDevices[folder]
	m.fmut.RUnlock()

	if !ok {
		return nil
	}

	var availabilities []Availability
	for _, device := range fs.Availability(file) {
		if _, ok := m.conn[device]; ok {
			availabilities = append(availabilities, Availability{device, false})
		}
	}
	for _, device := range devices {
		if m.deviceDownloads[device].Has(folder, file) {
			availabilities = append(availabilities, Availability{device, true})
		}
	}
	return availabilities
}

func stringSliceWithout(ss []string, s string) []string {
	out := ss[:0]
	for _, v := range ss {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}

type fakeConn struct{}

func (fakeConn) Close() {}

func main() {
	fs := &FileSet{
		folder:  "photos",
		have:    map[DeviceID][]FileInfo{"peer": {{Name: "a.jpg", Size: 10}}},
		globals: []FileInfo{{"a.jpg", 10}, {"b.jpg", 20}, {"c.jpg", 30}, {"d.jpg", 40}},
	}
	m := &Model{
		folderFiles:     map[string]*FileSet{"photos": fs},
		folderDevices:   map[string][]DeviceID{"photos": {"peer"}},
		deviceFolders:   map[DeviceID][]string{"peer": {"photos"}},
		conn:            map[DeviceID]Connection{"peer": fakeConn{}},
		deviceDownloads: map[DeviceID]*deviceDownloadState{},
	}

	done := make(chan string)
	go func() { // GUI: /rest/db/status
		n, b := m.NeedSize("photos")
		done <- fmt.Sprint("need ", n, " files, ", b, " bytes")
	}()
	time.Sleep(30 * time.Millisecond)
	go func() { // config commit: the folder was removed
		m.RemoveFolder("photos")
		done <- "folder removed"
	}()
	time.Sleep(30 * time.Millisecond)
	go func() { // puller: where can this block be fetched from?
		done <- fmt.Sprint("availability: ", m.Availability("photos", "a.jpg"))
	}()
	for i := 0; i < 3; i++ {
		fmt.Println(<-done)
	}
}
