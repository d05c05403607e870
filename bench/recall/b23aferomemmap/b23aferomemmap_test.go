// Project: spf13/afero (memmap.go)
// Bug: MemMapFs.OpenFile looked the file up while holding m.mu.RLock and,
// for O_CREATE on a missing file, called m.Create, which takes m.mu.Lock
// while the read lock is still held by the same goroutine.
// Fix: look the file up through openWrite (which releases the read lock)
// and only then call Create, as upstream does.
package b23aferomemmap

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const FilePathSeparator = string(filepath.Separator)

type FileData struct {
	sync.Mutex
	name    string
	data    []byte
	memDir  map[string]*FileData
	dir     bool
	mode    os.FileMode
	modtime time.Time
}

func CreateFile(name string) *FileData {
	return &FileData{name: name, mode: os.ModeTemporary, modtime: time.Now()}
}

func CreateDir(name string) *FileData {
	return &FileData{name: name, memDir: map[string]*FileData{}, dir: true, modtime: time.Now()}
}

func SetMode(f *FileData, mode os.FileMode) {
	f.Lock()
	f.mode = mode
	f.Unlock()
}

type File struct {
	at       int64
	readOnly bool
	closed   bool
	fileData *FileData
}

func NewFileHandle(data *FileData) *File { return &File{fileData: data} }

func (f *File) Name() string { return f.fileData.name }

func (f *File) Write(b []byte) (int, error) {
	f.fileData.Lock()
	defer f.fileData.Unlock()
	f.fileData.data = append(f.fileData.data[:f.at], b...)
	f.at += int64(len(b))
	f.fileData.modtime = time.Now()
	return len(b), nil
}

type MemMapFs struct {
	mu   sync.RWMutex
	data map[string]*FileData
	init sync.Once
}

func normalizePath(path string) string {
	path = filepath.Clean(path)
	switch path {
	case ".":
		return FilePathSeparator
	case "..":
		return FilePathSeparator
	default:
		return path
	}
}

func (m *MemMapFs) getData() map[string]*FileData {
	m.init.Do(func() {
		m.data = make(map[string]*FileData)
		m.data[FilePathSeparator] = CreateDir(FilePathSeparator)
	})
	return m.data
}

func (m *MemMapFs) registerWithParent(f *FileData) {
	parent := filepath.Dir(normalizePath(f.name))
	pdir, ok := m.getData()[parent]
	if !ok {
		pdir = CreateDir(parent)
		m.getData()[parent] = pdir
	}
	pdir.Lock()
	pdir.memDir[strings.TrimPrefix(f.name, parent)] = f
	pdir.Unlock()
}

func (m *MemMapFs) Create(name string) (*File, error) {
	name = normalizePath(name)
	m.mu.Lock()
	file := CreateFile(name)
	m.getData()[name] = file
	m.registerWithParent(file)
	m.mu.Unlock()
	return NewFileHandle(file), nil
}

func (m *MemMapFs) openWrite(name string) (*File, error) {
	name = normalizePath(name)
	m.mu.RLock()
	f, ok := m.getData()[name]
	m.mu.RUnlock()
	if !ok {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	return NewFileHandle(f), nil
}

func (m *MemMapFs) OpenFile(name string, flag int, perm os.FileMode) (*File, error) {
	name = normalizePath(name)
	m.mu.RLock()
	defer m.mu.RUnlock()
	var file *File
	if f, ok := m.getData()[name]; ok {
		if flag&os.O_EXCL > 0 {
			return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrExist}
		}
		file = NewFileHandle(f)
	} else if flag&os.O_CREATE > 0 {
		created, err := m.Create(name)
		if err != nil {
			return nil, err
		}
		file = created
		SetMode(file.fileData, perm&os.ModePerm)
	} else {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	return file, nil
}

func TestProbe(t *testing.T) {
	fs := &MemMapFs{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := fs.OpenFile("/site/public/index.html", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := f.Write([]byte("<html></html>")); err != nil {
			t.Error(err)
		}
	}()
	<-done
	if _, err := fs.openWrite("/site/public/index.html"); err != nil {
		t.Fatal(err)
	}
}
