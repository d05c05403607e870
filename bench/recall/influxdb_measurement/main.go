// Project: influxdb (tsdb/meta.go: Measurement.TagSets, Measurement.filters, Measurement.SeriesIDs)
// Bug: a query goroutine calls Measurement.TagSets, which takes m.mu.RLock and then calls
// m.filters -> m.SeriesIDs. When the lazily sorted series-id cache is stale (after DropSeries),
// SeriesIDs drops its own RLock and calls m.mu.Lock to rebuild it while TagSets still holds
// the outer RLock: a read-to-write upgrade on the same RWMutex that can never succeed.
// Upstream fix: influxdata/influxdb#8355 calls m.filters before taking m.mu.RLock in TagSets.

package main

import (
	"fmt"
	"sort"
	"sync"
)

type SeriesIDs []uint64

type Series struct {
	ID   uint64
	Key  string
	Tags map[string]string
}

type BinaryExpr struct{ LHS, RHS string }

type IteratorOptions struct {
	Condition  *BinaryExpr
	Dimensions []string
}

type Measurement struct {
	mu                  sync.RWMutex
	seriesByID          map[uint64]*Series
	seriesByTagKeyValue map[string]map[string]SeriesIDs
	sortedSeriesIDs     SeriesIDs
}

func (m *Measurement) SeriesIDs() SeriesIDs {
	m.mu.RLock()
	if len(m.sortedSeriesIDs) == len(m.seriesByID) {
		s := m.sortedSeriesIDs
		m.mu.RUnlock()
		return s
	}
	m.mu.RUnlock()

	m.mu.Lock() // DEADLOCK HERE
	defer m.mu.Unlock()
	m.sortedSeriesIDs = m.sortedSeriesIDs[:0]
	for k := range m.seriesByID {
		m.sortedSeriesIDs = append(m.sortedSeriesIDs, k)
	}
	sort.Slice(m.sortedSeriesIDs, func(i, j int) bool { return m.sortedSeriesIDs[i] < m.sortedSeriesIDs[j] })
	return m.sortedSeriesIDs
}

func (m *Measurement) AddSeries(s *Series) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seriesByID[s.ID] = s
	m.sortedSeriesIDs = append(m.sortedSeriesIDs, s.ID)
	for k, v := range s.Tags {
		if m.seriesByTagKeyValue[k] == nil {
			m.seriesByTagKeyValue[k] = map[string]SeriesIDs{}
		}
		m.seriesByTagKeyValue[k][v] = append(m.seriesByTagKeyValue[k][v], s.ID)
	}
}

func (m *Measurement) DropSeries(s *Series) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seriesByID, s.ID)
	m.sortedSeriesIDs = m.sortedSeriesIDs[:0] // clear the lazily sorted set of ids
}

func (m *Measurement) filters(cond *BinaryExpr) (SeriesIDs, error) {
	if cond == nil || cond.LHS == "time" {
		return m.SeriesIDs(), nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.seriesByTagKeyValue[cond.LHS][cond.RHS], nil
}

// TagSets groups the measurement's series keys by the tag set of the GROUP BY dimensions.
func (m *Measurement) TagSets(shardID uint64, opt IteratorOptions) (map[string][]string, error) {
	m.mu.RLock()
	ids, err := m.filters(opt.Condition)
	if err != nil {
		m.mu.RUnlock()
		return nil, err
	}
	tagSets := map[string][]string{}
	for _, id := range ids {
		s := m.seriesByID[id]
		key := ""
		for _, dim := range opt.Dimensions {
			key += dim + "=" + s.Tags[dim] + ","
		}
		tagSets[key] = append(tagSets[key], s.Key)
	}
	m.mu.RUnlock()
	return tagSets, nil
}

func main() {
	m := &Measurement{seriesByID: map[uint64]*Series{}, seriesByTagKeyValue: map[string]map[string]SeriesIDs{}}
	var series []*Series
	for i, host := range []string{"a", "b", "c"} {
		series = append(series, &Series{ID: uint64(i + 1), Key: "cpu,host=" + host, Tags: map[string]string{"host": host}})
		m.AddSeries(series[i])
	}
	m.DropSeries(series[1]) // DROP SERIES FROM cpu WHERE host='b'

	sets, err := m.TagSets(1, IteratorOptions{Dimensions: []string{"host"}})
	fmt.Println(len(sets), err)
}
