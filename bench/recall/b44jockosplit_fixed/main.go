// Fixed twin (PR #121 applied: split unlocks l.mu on the cleaner's error).
// Project: travisjeffery/jocko (Kafka implemented in Go), spring 2018.
// Files/functions: commitlog/commitlog.go: CommitLog.Append, checkSplit,
// split, Segments, NewestOffset; commitlog/delete_cleaner.go:
// DeleteCleaner.Clean; commitlog/segment.go: Segment.Delete;
// commitlog/reader.go: CommitLog.NewReader.
// Issue/PR: travisjeffery/jocko PR #121 "Fix split deadlock" ("Unlock the
// mutex in the event of an error").
//
// When the active segment is full, Append calls split, which takes l.mu and
// hands the extended segment list to the retention cleaner. If the delete
// cleaner fails to delete an old segment (its file was already removed),
// split returns the error with l.mu still locked; the next NewReader blocks
// in Segments() forever (as do OldestOffset, TruncateTo and Close). The fix
// unlocks the mutex before returning the cleaner's error.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

type MessageSet []byte

func (ms MessageSet) PutOffset(offset int64) { binary.BigEndian.PutUint64(ms[0:8], uint64(offset)) }

type Segment struct {
	log                                        *os.File
	BaseOffset, NextOffset, Position, maxBytes int64
}

func NewSegment(path string, baseOffset, maxBytes int64) (*Segment, error) {
	logPath := filepath.Join(path, fmt.Sprintf("%020d.log", baseOffset))
	log, err := os.OpenFile(logPath, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0666)
	if err != nil {
		return nil, err
	}
	return &Segment{log: log, BaseOffset: baseOffset, NextOffset: baseOffset, maxBytes: maxBytes}, nil
}

func (s *Segment) IsFull() bool { return s.Position >= s.maxBytes }
func (s *Segment) Size() int64  { return s.Position }

func (s *Segment) Write(p []byte) (n int, err error) {
	if n, err = s.log.Write(p); err != nil {
		return n, err
	}
	s.NextOffset++
	s.Position += int64(n)
	return n, nil
}

func (s *Segment) Delete() error {
	s.log.Close()
	return os.Remove(s.log.Name())
}

type Cleaner interface {
	Clean([]*Segment) ([]*Segment, error)
}

type DeleteCleaner struct{ Retention struct{ Bytes int64 } }

func NewDeleteCleaner(bytes int64) *DeleteCleaner {
	c := &DeleteCleaner{}
	c.Retention.Bytes = bytes // retention.bytes
	return c
}

func (c *DeleteCleaner) Clean(segments []*Segment) ([]*Segment, error) {
	if len(segments) == 0 || c.Retention.Bytes == -1 {
		return segments, nil
	}
	cleanedSegments := []*Segment{segments[len(segments)-1]}
	totalBytes := cleanedSegments[0].Size()
	if len(segments) > 1 {
		var i int
		for i = len(segments) - 2; i > -1; i-- {
			s := segments[i]
			totalBytes += s.Size()
			if totalBytes > c.Retention.Bytes {
				break
			}
			cleanedSegments = append([]*Segment{s}, cleanedSegments...)
		}
		for ; i > -1; i-- {
			if err := segments[i].Delete(); err != nil {
				return nil, err
			}
		}
	}
	return cleanedSegments, nil
}

type Options struct {
	Path                         string
	MaxSegmentBytes, MaxLogBytes int64
}

type CommitLog struct {
	Options
	cleaner        Cleaner
	mu             sync.RWMutex
	segments       []*Segment
	vActiveSegment atomic.Value
}

func New(opts Options) (*CommitLog, error) {
	if opts.Path == "" {
		return nil, errors.New("path is empty")
	}
	return &CommitLog{Options: opts, cleaner: NewDeleteCleaner(opts.MaxLogBytes)}, nil
}

func (l *CommitLog) Open() error {
	segment, err := NewSegment(l.Path, 0, l.MaxSegmentBytes)
	if err != nil {
		return err
	}
	l.segments = append(l.segments, segment)
	l.vActiveSegment.Store(segment)
	return nil
}

func (l *CommitLog) Append(ms MessageSet) (offset int64, err error) {
	if l.checkSplit() {
		if err := l.split(); err != nil {
			return offset, err
		}
	}
	offset = l.activeSegment().NextOffset
	ms.PutOffset(offset)
	_, err = l.activeSegment().Write(ms)
	return offset, err
}

func (l *CommitLog) NewestOffset() int64     { return l.activeSegment().NextOffset }
func (l *CommitLog) activeSegment() *Segment { return l.vActiveSegment.Load().(*Segment) }
func (l *CommitLog) checkSplit() bool        { return l.activeSegment().IsFull() }

func (l *CommitLog) Segments() []*Segment {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.segments
}

func (l *CommitLog) split() error {
	segment, err := NewSegment(l.Path, l.NewestOffset(), l.MaxSegmentBytes)
	if err != nil {
		return err
	}
	l.mu.Lock()
	segments := append(l.segments, segment)
	segments, err = l.cleaner.Clean(segments)
	if err != nil {
		l.mu.Unlock()
		return err
	}
	l.segments = segments
	l.mu.Unlock()
	l.vActiveSegment.Store(segment)
	return nil
}

func (l *CommitLog) NewReader(offset int64) (io.Reader, error) {
	for _, s := range l.Segments() {
		if s.BaseOffset <= offset && offset < s.NextOffset {
			return io.NewSectionReader(s.log, 0, s.Position), nil
		}
	}
	return nil, errors.New("segment not found")
}

func main() {
	dir, _ := os.MkdirTemp("", "jocko-commitlog")
	defer os.RemoveAll(dir)
	l, _ := New(Options{Path: dir, MaxSegmentBytes: 16, MaxLogBytes: 40})
	if err := l.Open(); err != nil {
		panic(err)
	}
	for i := 0; i < 6; i++ {
		if i == 5 {
			// an external retention job already removed the oldest segment file
			os.Remove(filepath.Join(dir, fmt.Sprintf("%020d.log", 2)))
		}
		off, err := l.Append(make(MessageSet, 16))
		fmt.Println("append", off, err)
	}
	if _, err := l.NewReader(l.NewestOffset() - 1); err != nil {
		fmt.Println("reader:", err)
	}
	fmt.Println("segments:", len(l.Segments()))
}
