// Project: influxdata/influxdb 1.7 (tsdb/series_file.go, tsdb/series_partition.go,
// tsdb/series_segment.go, tsdb/store.go).
// Issue #10540 "Influxd deadlocks while starting with corrupt timeseries file"
// (regression from #9308), fixed by PR #10541.
//
// SeriesFile.Open takes the file's reference lock f.refs for writing (line
// 118) so that no reader can retain the file while its partitions are
// being opened. When a partition fails to open (a corrupt segment header),
// the error path calls the exported f.Close() to release the partitions that
// were already opened; Close begins by taking f.refs for writing again (line
// 139) while Open still holds it through its deferred unlock. The store's
// open goroutine blocks forever and influxd hangs at startup instead of
// reporting the corrupt file. The fix splits Close into a locking wrapper and
// an unexported close(), which Open calls on its error path.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
)

// SeriesFilePartitionN is the number of partitions a series file is split into.
const SeriesFilePartitionN = 8

var ErrInvalidSeriesSegment = errors.New("invalid series segment")

// diskFS stands in for the data directory: path -> file contents.
var diskFS = map[string][]byte{}

var seriesSegmentMagic = []byte("SSEG")

// SeriesSegment represents a log of series entries.
type SeriesSegment struct {
	id   uint16
	path string
	data []byte
}

func (s *SeriesSegment) Open() error {
	data, ok := diskFS[s.path]
	if !ok {
		data = append([]byte(nil), seriesSegmentMagic...)
		diskFS[s.path] = data
	}
	if len(data) < len(seriesSegmentMagic) || !bytes.Equal(data[:4], seriesSegmentMagic) {
		return ErrInvalidSeriesSegment
	}
	s.data = data
	return nil
}

func (s *SeriesSegment) Close() error { s.data = nil; return nil }

// SeriesPartition represents a subset of series file data.
type SeriesPartition struct {
	mu       sync.RWMutex
	id       int
	path     string
	closed   bool
	segments []*SeriesSegment
}

func NewSeriesPartition(id int, path string) *SeriesPartition {
	return &SeriesPartition{id: id, path: path}
}

// Open memory maps the data file at the partition's path.
func (p *SeriesPartition) Open() error {
	if err := p.openSegments(); err != nil {
		p.Close()
		return err
	}
	return nil
}

func (p *SeriesPartition) openSegments() error {
	segment := &SeriesSegment{id: 0, path: filepath.Join(p.path, "0000")}
	if err := segment.Open(); err != nil {
		return err
	}
	p.segments = append(p.segments, segment)
	return nil
}

// Close unmaps the data files.
func (p *SeriesPartition) Close() (err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, s := range p.segments {
		if e := s.Close(); e != nil && err == nil {
			err = e
		}
	}
	p.segments = nil
	return err
}

// SeriesFile represents the section of the index that holds series data.
type SeriesFile struct {
	path       string
	partitions []*SeriesPartition

	refs sync.RWMutex // RWMutex to track references to the SeriesFile that are in use.
}

// NewSeriesFile returns a new instance of SeriesFile.
func NewSeriesFile(path string) *SeriesFile {
	return &SeriesFile{path: path}
}

// Open memory maps the data file at the file's path.
func (f *SeriesFile) Open() error {
	// Wait for all references to be released and prevent new ones from being acquired.
	f.refs.Lock()
	defer f.refs.Unlock()

	// Open partitions.
	f.partitions = make([]*SeriesPartition, 0, SeriesFilePartitionN)
	for i := 0; i < SeriesFilePartitionN; i++ {
		p := NewSeriesPartition(i, f.SeriesPartitionPath(i))
		if err := p.Open(); err != nil {
			fmt.Printf("Unable to open series file: path=%s partition=%d error=%v\n", f.path, i, err)
			f.Close()
			return err
		}
		f.partitions = append(f.partitions, p)
	}

	return nil
}

// Close unmaps the data file.
func (f *SeriesFile) Close() (err error) {
	// Wait for all references to be released and prevent new ones from being acquired.
	f.refs.Lock()
	defer f.refs.Unlock()

	for _, p := range f.partitions {
		if e := p.Close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// SeriesPartitionPath returns the path to a given partition.
func (f *SeriesFile) SeriesPartitionPath(i int) string {
	return filepath.Join(f.path, fmt.Sprintf("%02x", i))
}

// Retain adds a reference count to the file.  It returns a release func.
func (f *SeriesFile) Retain() func() {
	f.refs.RLock()
	return f.refs.RUnlock
}

// Store manages shards and indexes for databases.
type Store struct {
	mu          sync.RWMutex
	path        string
	sfiles      map[string]*SeriesFile
	databaseErr map[string]error
}

// openSeriesFile either returns or creates a series file for the provided
// database. It must be called under a full lock.
func (s *Store) openSeriesFile(database string) (*SeriesFile, error) {
	if sfile := s.sfiles[database]; sfile != nil {
		return sfile, nil
	}
	sfile := NewSeriesFile(filepath.Join(s.path, database, "_series"))
	if err := sfile.Open(); err != nil {
		return nil, err
	}
	s.sfiles[database] = sfile
	return sfile, nil
}

// loadShards opens the series file of every database found on disk.
func (s *Store) loadShards(databases []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, db := range databases {
		if _, err := s.openSeriesFile(db); err != nil {
			s.databaseErr[db] = err
			fmt.Printf("skipping database %s: %v\n", db, err)
		}
	}
	return nil
}

func main() {
	s := &Store{path: "/var/lib/influxdb/data", sfiles: map[string]*SeriesFile{}, databaseErr: map[string]error{}}
	// Partition 05 of database "telegraf" has a corrupt segment header.
	diskFS["/var/lib/influxdb/data/telegraf/_series/05/0000"] = []byte{0, 0, 0, 0, 1}

	_ = s.loadShards([]string{"_internal", "telegraf"})
	fmt.Println("ok, store opened; databases with errors:", len(s.databaseErr))
}
