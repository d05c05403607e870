// syncthing lib/model: the model held its folder mutex (fmut) while asking a
// folder to rescan; the folder reported progress through a callback that is a
// method value on the model (m.onProgress), and that callback took fmut again
// to update per-folder progress -> the scan goroutine deadlocked on itself.
// Fixed by snapshotting the folders under the lock and scanning without it.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/syncthingmodel/folder"
)

type folderState struct {
	sync.Mutex
	progress map[string]int
}

// Model is the syncthing model; its lock is promoted from folderState.
type Model struct {
	folderState
	folders map[string]*folder.Folder
}

func newModel() *Model {
	return &Model{
		folderState: folderState{progress: make(map[string]int)},
		folders:     make(map[string]*folder.Folder),
	}
}

func (m *Model) AddFolder(id string, files []string) {
	m.Lock()
	m.folders[id] = folder.New(id, files, m.onProgress)
	m.Unlock()
}

func (m *Model) onProgress(id string, done, total int) {
	m.Lock()
	m.progress[id] = done * 100 / total
	m.Unlock()
}

// ScanFolders rescans every folder and returns the number of files seen.
func (m *Model) ScanFolders() int {
	m.Lock()
	defer m.Unlock()
	n := 0
	for _, f := range m.folders {
		n += f.Scan()
	}
	return n
}

func (m *Model) Progress(id string) int {
	m.Lock()
	defer m.Unlock()
	return m.progress[id]
}

func main() {
	m := newModel()
	m.AddFolder("default", []string{"a.txt", "b.txt", "c.txt"})
	m.AddFolder("photos", []string{"1.jpg", "2.jpg"})

	done := make(chan int)
	go func() {
		done <- m.ScanFolders()
	}()
	fmt.Println("scanned", <-done, "files; default at", m.Progress("default"), "%")
}
