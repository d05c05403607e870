// Project: howeyc/fsnotify, now fsnotify/fsnotify (fsnotify_bsd.go, kqueue backend), v0.8.10 to v0.8.12 (range approximate), fixed in v0.9.0 (PR merged November 2013).
// Bug: removeWatch locks w.bufmut around the shared kevent buffer and returns the kevent_rm_watch error before the explicit w.bufmut.Unlock(), so when the kernel has already dropped the knote of a deleted file the lock leaks; the reader goroutine then rescans the parent directory and re-locks bufmut in addWatch, and every later Watch blocks as well (howeyc/fsnotify PR #77 "Fix deadlock on BSD", which unlocks bufmut right after the Kevent call).
package b115fsnotifybufmut

import (
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	sys_NOTE_DELETE, sys_NOTE_WRITE, sys_NOTE_RENAME = 0x1, 0x2, 0x20
	sys_NOTE_ALLEVENTS                               = sys_NOTE_DELETE | sys_NOTE_WRITE | sys_NOTE_RENAME
	evAdd, evDelete                                  = 0x1, 0x2
	keventWaitTime                                   = 100 * time.Millisecond
)

type keventT struct {
	Ident  int
	Flags  uint16
	Fflags uint32
}

type fileInfo struct{ dir bool }

func (fi fileInfo) IsDir() bool { return fi.dir }

// fakeBSD stands in for the kqueue(2), open(2) and readdir syscalls.
type fakeBSD struct {
	mu       sync.Mutex
	files    map[string]bool // path -> isDir
	fds      map[int]string
	knotes   map[int]bool
	pending  chan keventT
	rmFailed chan int
}

func (k *fakeBSD) open(path string) (int, fileInfo, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	fd := len(k.fds) + 3
	k.fds[fd] = path
	return fd, fileInfo{dir: k.files[path]}, nil
}

func (k *fakeBSD) readDir(dir string) (names []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for p := range k.files {
		if filepath.Dir(p) == dir && p != dir {
			names = append(names, p)
		}
	}
	return names
}

// kevent registers one change, or waits up to keventWaitTime for one event.
func (k *fakeBSD) kevent(changes []keventT, events []keventT) (int, error) {
	if changes == nil {
		select {
		case events[0] = <-k.pending:
			return 1, nil
		case <-time.After(keventWaitTime):
			return 0, nil
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := changes[0]; c.Flags&evDelete != 0 && !k.knotes[c.Ident] {
		k.rmFailed <- c.Ident
		return -1, syscall.ENOENT
	}
	k.knotes[changes[0].Ident] = changes[0].Flags&evAdd != 0
	return 0, nil
}

// remove unlinks a file: the kernel drops its knote and reports NOTE_DELETE.
func (k *fakeBSD) remove(path string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.files, path)
	for fd, p := range k.fds {
		if p == path {
			delete(k.knotes, fd)
			k.pending <- keventT{Ident: fd, Fflags: sys_NOTE_DELETE}
		}
	}
}

type FileEvent struct {
	mask uint32
	Name string
}

func (e *FileEvent) IsDelete() bool { return e.mask&sys_NOTE_DELETE == sys_NOTE_DELETE }

type Watcher struct {
	watches    map[string]int   // Map of watched file descriptors (key: path)
	wmut       sync.Mutex       // Protects access to watches.
	paths      map[int]string   // Map of watched paths (key: watch descriptor)
	finfo      map[int]fileInfo // Map of file information (isDir, isReg; key: watch descriptor)
	pmut       sync.Mutex       // Protects access to paths and finfo.
	fileExists map[string]bool  // Keep track of if we know this file exists
	femut      sync.Mutex       // Protects access to fileExists.
	Event      chan *FileEvent
	kbuf       [1]keventT // An event buffer for Add/Remove watch
	bufmut     sync.Mutex // Protects access to kbuf.
	sys        *fakeBSD
}

func (w *Watcher) addWatch(path string, flags uint32) error {
	w.wmut.Lock()
	watchfd, found := w.watches[path]
	w.wmut.Unlock()
	if !found {
		fd, fi, err := w.sys.open(path)
		if err != nil {
			return err
		}
		watchfd = fd
		w.wmut.Lock()
		w.watches[path] = watchfd
		w.wmut.Unlock()
		w.pmut.Lock()
		w.paths[watchfd], w.finfo[watchfd] = path, fi
		w.pmut.Unlock()
	}
	w.pmut.Lock()
	watchDir := w.finfo[watchfd].IsDir() && !found
	w.pmut.Unlock()

	w.bufmut.Lock()
	w.kbuf[0] = keventT{Ident: watchfd, Flags: evAdd, Fflags: flags}
	_, errno := w.sys.kevent(w.kbuf[:], nil)
	w.bufmut.Unlock()
	if errno != nil {
		return errno
	}
	if watchDir {
		return w.watchDirectoryFiles(path)
	}
	return nil
}

// removeWatch removes path from the watched file set.
func (w *Watcher) removeWatch(path string) error {
	w.wmut.Lock()
	watchfd, ok := w.watches[path]
	w.wmut.Unlock()
	if !ok {
		return fmt.Errorf("can't remove non-existent kevent watch for: %s", path)
	}
	w.bufmut.Lock()
	w.kbuf[0] = keventT{Ident: watchfd, Flags: evDelete}
	success, errno := w.sys.kevent(w.kbuf[:], nil)
	if success == -1 {
		return fmt.Errorf("kevent_rm_watch: %w", errno) // BUG: w.bufmut is still locked
	}
	w.bufmut.Unlock()
	w.wmut.Lock()
	delete(w.watches, path)
	w.wmut.Unlock()
	w.pmut.Lock()
	delete(w.paths, watchfd)
	delete(w.finfo, watchfd)
	w.pmut.Unlock()
	return nil
}

func (w *Watcher) readEvents() {
	events := make([]keventT, 1)
	for {
		if n, _ := w.sys.kevent(nil, events); n == 0 {
			continue
		}
		fileEvent := &FileEvent{mask: events[0].Fflags}
		w.pmut.Lock()
		fileEvent.Name = w.paths[events[0].Ident]
		fileInfo := w.finfo[events[0].Ident]
		w.pmut.Unlock()
		if fileInfo.IsDir() && !fileEvent.IsDelete() {
			w.sendDirectoryChangeEvents(fileEvent.Name)
		} else {
			w.Event <- fileEvent
		}
		if fileEvent.IsDelete() {
			w.removeWatch(fileEvent.Name)
			w.femut.Lock()
			delete(w.fileExists, fileEvent.Name)
			w.femut.Unlock()
			// Look for a file that may have overwritten this (mv f1 f2 deletes f2 then creates f2).
			fileDir := filepath.Dir(fileEvent.Name)
			w.wmut.Lock()
			_, found := w.watches[fileDir]
			w.wmut.Unlock()
			if found {
				w.sendDirectoryChangeEvents(fileDir)
			}
		}
	}
}

func (w *Watcher) watchDirectoryFiles(dirPath string) error {
	for _, filePath := range w.sys.readDir(dirPath) {
		if err := w.addWatch(filePath, sys_NOTE_ALLEVENTS); err != nil {
			return err
		}
		w.femut.Lock()
		w.fileExists[filePath] = true
		w.femut.Unlock()
	}
	return nil
}

// sendDirectoryChangeEvents reports files created in dirPath, then (re)watches its files.
func (w *Watcher) sendDirectoryChangeEvents(dirPath string) {
	for _, filePath := range w.sys.readDir(dirPath) {
		w.femut.Lock()
		doesExist := w.fileExists[filePath]
		w.femut.Unlock()
		if !doesExist {
			w.Event <- &FileEvent{Name: filePath}
		}
	}
	w.watchDirectoryFiles(dirPath)
}

func TestB115fsnotifybufmut(t *testing.T) {
	sys := &fakeBSD{files: map[string]bool{"/proj": true, "/proj/a.go": false, "/proj/b.go": false, "/notes.txt": false},
		fds: map[int]string{}, knotes: map[int]bool{}, pending: make(chan keventT, 8), rmFailed: make(chan int, 8)}
	w := &Watcher{watches: map[string]int{}, paths: map[int]string{}, finfo: map[int]fileInfo{},
		fileExists: map[string]bool{}, Event: make(chan *FileEvent), sys: sys}
	go w.readEvents()
	if err := w.addWatch("/proj", sys_NOTE_ALLEVENTS); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range w.Event {
		}
	}()

	sys.remove("/proj/a.go") // e.g. an editor's atomic save
	<-sys.rmFailed           // the reader's removeWatch got ENOENT from kevent

	if err := w.addWatch("/notes.txt", sys_NOTE_ALLEVENTS); err != nil {
		t.Fatal(err)
	}
}
