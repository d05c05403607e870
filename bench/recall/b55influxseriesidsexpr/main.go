// Project: influxdata/influxdb 1.4 dev (inmem index).
// Files/functions: tsdb/index/inmem/meta.go (Measurement.SeriesIDsAllOrByExpr, WalkWhereForSeriesIDs,
// idsForExpr, SeriesIDs, AddSeries), tsdb/index/inmem/inmem.go (Index.MeasurementSeriesKeysByExpr,
// the caller used by SHOW SERIES / DELETE with a WHERE clause).
// PR influxdata/influxdb#8766 "Fix deadlock when calling SeriesIDsAllOrByExpr" (August 2017).
//
// SeriesIDsAllOrByExpr read-locks the measurement and, with the read lock held, walks the WHERE
// expression with WalkWhereForSeriesIDs -> idsForExpr. For a != comparison (and for a comparison
// on _name) idsForExpr starts from all of the measurement's series via the public SeriesIDs().
// SeriesIDs caches a sorted id slice: it read-locks, and when series were added since the cache
// was built it drops the read lock and takes the write lock to rebuild it. The
// goroutine still holds the outer read lock from SeriesIDsAllOrByExpr, so the write lock can
// never be granted and the query goroutine hangs, taking every writer to that measurement (and
// later readers queued behind them) with it. The fix no longer holds the measurement lock across
// the expression walk: SeriesIDsAllOrByExpr only read-locks to check the series count.
package main

import (
	"fmt"
	"sort"
	"sync"
)

type Token int

const (
	EQ Token = iota
	NEQ
	AND
)

type (
	Expr          interface{ expr() }
	VarRef        struct{ Val string }
	StringLiteral struct{ Val string }
	BinaryExpr    struct {
		Op       Token
		LHS, RHS Expr
	}
)

func (*VarRef) expr()        {}
func (*StringLiteral) expr() {}
func (*BinaryExpr) expr()    {}

type SeriesIDs []uint64

// Reject returns the ids in a that are not in other.
func (a SeriesIDs) Reject(other SeriesIDs) SeriesIDs {
	skip := map[uint64]bool{}
	for _, id := range other {
		skip[id] = true
	}
	var out SeriesIDs
	for _, id := range a {
		if !skip[id] {
			out = append(out, id)
		}
	}
	return out
}

type Series struct {
	ID   uint64
	Key  string
	Tags map[string]string
}

type Measurement struct {
	mu                  sync.RWMutex
	Name                string
	seriesByID          map[uint64]*Series
	seriesByTagKeyValue map[string]map[string]SeriesIDs
	sortedSeriesIDs     SeriesIDs
}

// AddSeries adds a series to the measurement's index; the sorted id cache is rebuilt lazily.
func (m *Measurement) AddSeries(s *Series) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seriesByID[s.ID] = s
	for k, v := range s.Tags {
		if m.seriesByTagKeyValue[k] == nil {
			m.seriesByTagKeyValue[k] = map[string]SeriesIDs{}
		}
		m.seriesByTagKeyValue[k][v] = append(m.seriesByTagKeyValue[k][v], s.ID)
	}
}

// SeriesIDs returns the series ids for the measurement.
func (m *Measurement) SeriesIDs() SeriesIDs {
	m.mu.RLock()
	if len(m.sortedSeriesIDs) == len(m.seriesByID) {
		s := m.sortedSeriesIDs
		m.mu.RUnlock()
		return s
	}
	m.mu.RUnlock()

	m.mu.Lock()
	defer m.mu.Unlock()
	m.sortedSeriesIDs = m.sortedSeriesIDs[:0]
	for id := range m.seriesByID {
		m.sortedSeriesIDs = append(m.sortedSeriesIDs, id)
	}
	sort.Slice(m.sortedSeriesIDs, func(i, j int) bool { return m.sortedSeriesIDs[i] < m.sortedSeriesIDs[j] })
	return m.sortedSeriesIDs
}

// SeriesIDsAllOrByExpr walks an expressions for matching series IDs
// or, if no expressions is given, returns all series IDs for the measurement.
func (m *Measurement) SeriesIDsAllOrByExpr(expr Expr) (SeriesIDs, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if expr == nil {
		return append(SeriesIDs(nil), m.sortedSeriesIDs...), nil
	} else if len(m.seriesByID) == 0 {
		return nil, nil
	}
	// Get series IDs that match the WHERE clause.
	return m.WalkWhereForSeriesIDs(expr)
}

// WalkWhereForSeriesIDs returns the series ids for a where clause.
func (m *Measurement) WalkWhereForSeriesIDs(expr Expr) (SeriesIDs, error) {
	switch n := expr.(type) {
	case *BinaryExpr:
		switch n.Op {
		case EQ, NEQ:
			return m.idsForExpr(n)
		case AND:
			lids, lerr := m.WalkWhereForSeriesIDs(n.LHS)
			rids, rerr := m.WalkWhereForSeriesIDs(n.RHS)
			if lerr != nil || rerr != nil {
				return nil, fmt.Errorf("walk where: %v, %v", lerr, rerr)
			}
			return lids.Reject(lids.Reject(rids)), nil
		}
	}
	return nil, fmt.Errorf("unsupported expression %T", expr)
}

// idsForExpr returns the series ids for a simple tag comparison.
func (m *Measurement) idsForExpr(n *BinaryExpr) (SeriesIDs, error) {
	name, str := n.LHS.(*VarRef), n.RHS.(*StringLiteral)
	if name.Val == "_name" {
		if (n.Op == EQ && str.Val == m.Name) || (n.Op == NEQ && str.Val != m.Name) {
			return m.SeriesIDs(), nil
		}
		return nil, nil
	}
	tagVals := m.seriesByTagKeyValue[name.Val]
	if n.Op == EQ {
		return tagVals[str.Val], nil
	}
	// Return all series that don't have the tag value.
	return m.SeriesIDs().Reject(tagVals[str.Val]), nil
}

type Index struct {
	mu           sync.RWMutex
	measurements map[string]*Measurement
}

// MeasurementSeriesKeysByExpr returns the series keys of a measurement matching expr.
func (i *Index) MeasurementSeriesKeysByExpr(name string, condition Expr) ([]string, error) {
	i.mu.RLock()
	m := i.measurements[name]
	i.mu.RUnlock()
	if m == nil {
		return nil, nil
	}
	ids, err := m.SeriesIDsAllOrByExpr(condition)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, m.seriesByID[id].Key)
	}
	return keys, nil
}

func main() {
	m := &Measurement{Name: "cpu", seriesByID: map[uint64]*Series{}, seriesByTagKeyValue: map[string]map[string]SeriesIDs{}}
	idx := &Index{measurements: map[string]*Measurement{"cpu": m}}
	m.AddSeries(&Series{ID: 1, Key: "cpu,host=a", Tags: map[string]string{"host": "a"}})
	m.AddSeries(&Series{ID: 2, Key: "cpu,host=b", Tags: map[string]string{"host": "b"}})
	fmt.Println("all ids:", m.SeriesIDs())
	// A point for a new host arrives; the sorted id cache is now stale.
	m.AddSeries(&Series{ID: 3, Key: "cpu,host=c", Tags: map[string]string{"host": "c"}})

	// SHOW SERIES FROM cpu WHERE host != 'a'
	keys, err := idx.MeasurementSeriesKeysByExpr("cpu", &BinaryExpr{Op: NEQ, LHS: &VarRef{Val: "host"}, RHS: &StringLiteral{Val: "a"}})
	fmt.Println("series:", keys, err)
}
