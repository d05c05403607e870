// Project: juicedata/juicefs (pkg/meta/redis.go redisDirHandler.List, Insert, Close; pkg/vfs/vfs.go Readdir, Releasedir; pkg/vfs/handle.go releaseHandle, invalidateDirHandle), 1.3 development, March 2025.
// Bug: redisDirHandler.List locks the directory handler's embedded mutex and returns early when the HSCAN of the directory entries fails, without unlocking it. When a readdir is interrupted (the FUSE request context is canceled, so hscan returns the context error), the handler stays locked; a later create in the same directory blocks in invalidateDirHandle on dirHandler.Insert, and closing the directory blocks in releaseHandle on dirHandler.Close while holding the VFS handle map mutex, which hangs the whole mount (issue #5717 "Deadlocks after list interrupt. redis list interrupt does not release the lock", fixed by PR #5718 "meta/redis: fix dir lock", which defers the unlock).
package b113juicefsdirlist

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
)

type Ino uint64

type Attr struct{ Typ, Mode uint16 }

type Entry struct {
	Inode Ino
	Name  []byte
	Attr  *Attr
}

// Context is meta.Context; the FUSE request context is canceled on interrupt.
type Context = context.Context

func errno(err error) syscall.Errno {
	if errors.Is(err, context.Canceled) {
		return syscall.EINTR
	}
	return syscall.EIO
}

// DirHandler is meta.DirHandler, kept by the vfs directory handle between readdir calls.
type DirHandler interface {
	List(ctx Context, offset int) ([]*Entry, syscall.Errno)
	Insert(inode Ino, name string, attr *Attr)
	Close()
}

// redisMeta holds the directory hashes the real engine keeps in Redis.
type redisMeta struct {
	mu      sync.Mutex
	dirs    map[Ino]map[string]Ino
	nextIno Ino
}

// hscan walks the directory hash like HSCAN with a cursor, one round trip per batch.
func (m *redisMeta) hscan(ctx Context, dir Ino, scanner func(name string, ino Ino) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, ino := range m.dirs[dir] {
		if err := ctx.Err(); err != nil {
			return err
		}
		scanner(name, ino)
	}
	return nil
}

func (m *redisMeta) NewDirHandler(ctx Context, inode Ino, plus bool) DirHandler {
	return &redisDirHandler{en: m, inode: inode, plus: plus}
}

func (m *redisMeta) Mknod(ctx Context, parent Ino, name string, mode uint16) (Ino, *Attr, syscall.Errno) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextIno++
	m.dirs[parent][name] = m.nextIno
	return m.nextIno, &Attr{Typ: 1, Mode: mode}, 0
}

type redisDirHandler struct {
	sync.Mutex
	inode   Ino
	plus    bool
	en      *redisMeta
	entries []*Entry
}

func (s *redisDirHandler) Close() {
	s.Lock()
	s.entries = nil
	s.Unlock()
}

func (s *redisDirHandler) Insert(inode Ino, name string, attr *Attr) {
	s.Lock()
	defer s.Unlock()
	if len(s.entries) == 0 {
		return
	}
	s.entries = append(s.entries, &Entry{Inode: inode, Name: []byte(name), Attr: attr})
}

func (s *redisDirHandler) List(ctx Context, offset int) ([]*Entry, syscall.Errno) {
	s.Lock()
	if s.entries == nil {
		var entries []*Entry
		err := s.en.hscan(ctx, s.inode, func(name string, ino Ino) error {
			entries = append(entries, &Entry{Inode: ino, Name: []byte(name), Attr: &Attr{}})
			return nil
		})
		if err != nil {
			return nil, errno(err)
		}
		s.entries = entries
	}
	entries := s.entries[offset:]
	s.Unlock()
	return entries, 0
}

// handle is the vfs directory handle.
type handle struct {
	sync.Mutex
	fh         uint64
	dirHandler DirHandler
}

type VFS struct {
	Meta    *redisMeta
	hanleM  sync.Mutex
	handles map[Ino][]*handle
	nextfh  uint64
}

func (v *VFS) findHandle(inode Ino, fh uint64) *handle {
	v.hanleM.Lock()
	defer v.hanleM.Unlock()
	for _, f := range v.handles[inode] {
		if f.fh == fh {
			return f
		}
	}
	return nil
}

func (v *VFS) releaseHandle(inode Ino, fh uint64) {
	v.hanleM.Lock()
	defer v.hanleM.Unlock()
	hs := v.handles[inode]
	for i, f := range hs {
		if f.fh == fh {
			v.handles[inode] = append(hs[:i:i], hs[i+1:]...)
			if f.dirHandler != nil {
				f.dirHandler.Close()
				f.dirHandler = nil
			}
			break
		}
	}
}

func (v *VFS) invalidateDirHandle(parent Ino, name string, inode Ino, attr *Attr) {
	v.hanleM.Lock()
	hs := v.handles[parent]
	v.hanleM.Unlock()
	for _, h := range hs {
		h.Lock()
		if h.dirHandler != nil {
			h.dirHandler.Insert(inode, name, attr)
		}
		h.Unlock()
	}
}

func (v *VFS) Opendir(ctx Context, ino Ino) uint64 {
	v.hanleM.Lock()
	defer v.hanleM.Unlock()
	v.nextfh++
	v.handles[ino] = append(v.handles[ino], &handle{fh: v.nextfh})
	return v.nextfh
}

func (v *VFS) Readdir(ctx Context, ino Ino, size uint32, off int, fh uint64, plus bool) ([]*Entry, syscall.Errno) {
	h := v.findHandle(ino, fh)
	if h == nil {
		return nil, syscall.EBADF
	}
	h.Lock()
	defer h.Unlock()
	if h.dirHandler == nil || off == 0 {
		if h.dirHandler != nil {
			h.dirHandler.Close()
		}
		h.dirHandler = v.Meta.NewDirHandler(ctx, ino, plus)
	}
	return h.dirHandler.List(ctx, off)
}

func (v *VFS) Mknod(ctx Context, parent Ino, name string, mode uint16) syscall.Errno {
	ino, attr, err := v.Meta.Mknod(ctx, parent, name, mode)
	if err == 0 {
		v.invalidateDirHandle(parent, name, ino, attr)
	}
	return err
}

func (v *VFS) Releasedir(ctx Context, ino Ino, fh uint64) { v.releaseHandle(ino, fh) }

func TestB113juicefsdirlist(t *testing.T) {
	v := &VFS{Meta: &redisMeta{dirs: map[Ino]map[string]Ino{1: {"a": 2, "b": 3}}, nextIno: 3}, handles: map[Ino][]*handle{}}
	bg := context.Background()
	fh := v.Opendir(bg, 1)

	// `ls` is interrupted with Ctrl-C: go-fuse cancels the request context.
	interrupted, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Readdir(interrupted, 1, 4096, 0, fh, true); err != syscall.EINTR {
		t.Fatalf("interrupted readdir: %v", err)
	}

	created := make(chan struct{})
	go func() {
		// Another process creates a file in the directory that is still open.
		v.Mknod(bg, 1, "c", 0644)
		close(created)
	}()
	// The shell closes the directory.
	v.Releasedir(bg, 1, fh)
	<-created
}
