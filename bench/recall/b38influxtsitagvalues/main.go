// Project: influxdata/influxdb (tsdb/index/tsi1/log_file.go, partition.go;
// 1.x up to 1.12.0 and 2.x up to 2.7.11).
// Issue #26164 "Possible Deadlock in TagValueIterator() and AddSeriesList()"
// (also #23956), fixed by PR #26369 "TagValueIterator holds RLock recursively"
// (1.x backport #26372).
//
// LogFile.TagValueIterator read-locks the log file (line 94) and, still
// holding that read lock through its deferred RUnlock, returns
// tk.TagValueIterator(); logTagKey.TagValueIterator read-locks the same
// LogFile mutex again through its back-pointer tk.f (line 70). When a
// write calls LogFile.AddSeriesList between the two read locks, its Lock waits
// for the first reader, and the pending writer makes the second RLock wait:
// the query goroutine, the writer and every later reader of the shard's index
// hang. The fix releases f.mu before calling tk.TagValueIterator().
package main

import (
	"fmt"
	"sort"
	"sync"
)

type logTagValue struct {
	name    []byte
	deleted bool
	series  map[uint64]struct{}
}

type logTagKey struct {
	f         *LogFile
	name      []byte
	deleted   bool
	tagValues map[string]logTagValue
}

type logMeasurement struct {
	f      *LogFile
	name   []byte
	tagSet map[string]logTagKey
}

type logMeasurements map[string]*logMeasurement

// TagValueIterator is an iterator over the values of one tag key.
type TagValueIterator interface {
	Next() []byte
}

type logTagValueIterator struct {
	a []logTagValue
}

func (itr *logTagValueIterator) Next() []byte {
	if len(itr.a) == 0 {
		return nil
	}
	e := itr.a[0]
	itr.a = itr.a[1:]
	return e.name
}

// newLogTagValueIterator returns a new instance of logTagValueIterator.
func newLogTagValueIterator(a []logTagValue) *logTagValueIterator {
	sort.Slice(a, func(i, j int) bool { return string(a[i].name) < string(a[j].name) })
	return &logTagValueIterator{a: a}
}

// TagValueIterator returns an iterator over the tag key's values.
func (tk *logTagKey) TagValueIterator() TagValueIterator {
	tk.f.mu.RLock()
	a := make([]logTagValue, 0, len(tk.tagValues))
	for _, v := range tk.tagValues {
		a = append(a, v)
	}
	tk.f.mu.RUnlock()

	return newLogTagValueIterator(a)
}

// LogFile represents an on-disk write-ahead log file.
type LogFile struct {
	mu      sync.RWMutex
	seq     uint64
	mms     logMeasurements
	entries int
}

func NewLogFile() *LogFile {
	return &LogFile{mms: make(logMeasurements)}
}

// TagValueIterator returns a value iterator for a tag key.
func (f *LogFile) TagValueIterator(name, key []byte) TagValueIterator {
	f.mu.RLock()
	defer f.mu.RUnlock()

	mm, ok := f.mms[string(name)]
	if !ok {
		return nil
	}

	tk, ok := mm.tagSet[string(key)]
	if !ok {
		return nil
	}
	return tk.TagValueIterator()
}

// AddSeriesList adds a list of series to the log file in bulk.
func (f *LogFile) AddSeriesList(names [][]byte, tagKeys, tagValues [][]byte) ([]uint64, error) {
	ids := make([]uint64, len(names))

	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range names {
		f.seq++
		ids[i] = f.seq
		f.execSeriesEntry(names[i], tagKeys[i], tagValues[i], f.seq)
	}
	return ids, nil
}

func (f *LogFile) execSeriesEntry(name, key, value []byte, id uint64) {
	mm := f.mms[string(name)]
	if mm == nil {
		mm = &logMeasurement{f: f, name: name, tagSet: make(map[string]logTagKey)}
		f.mms[string(name)] = mm
	}
	tk, ok := mm.tagSet[string(key)]
	if !ok {
		tk = logTagKey{f: f, name: key, tagValues: make(map[string]logTagValue)}
	}
	tv, ok := tk.tagValues[string(value)]
	if !ok {
		tv = logTagValue{name: value, series: make(map[uint64]struct{})}
	}
	tv.series[id] = struct{}{}
	tk.tagValues[string(value)] = tv
	mm.tagSet[string(key)] = tk
	f.entries++
}

// Partition is one shard's index partition; it reads through its active log file.
type Partition struct {
	activeLogFile *LogFile
}

// TagValueIterator returns an iterator for all values across a single key.
func (p *Partition) TagValueIterator(name, key []byte) TagValueIterator {
	return p.activeLogFile.TagValueIterator(name, key)
}

func main() {
	p := &Partition{activeLogFile: NewLogFile()}
	_, _ = p.activeLogFile.AddSeriesList([][]byte{[]byte("cpu")}, [][]byte{[]byte("host")}, [][]byte{[]byte("a")})

	var wg sync.WaitGroup
	// Queries: SHOW TAG VALUES / GROUP BY host.
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20000; i++ {
				if itr := p.TagValueIterator([]byte("cpu"), []byte("host")); itr != nil {
					itr.Next()
				}
			}
		}()
	}
	// Writes: new series arriving in the same shard.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20000; i++ {
			v := []byte(fmt.Sprintf("h%d", i%64))
			_, _ = p.activeLogFile.AddSeriesList([][]byte{[]byte("cpu")}, [][]byte{[]byte("host")}, [][]byte{v})
		}
	}()
	wg.Wait()
	fmt.Println("ok, entries:", p.activeLogFile.entries)
}
