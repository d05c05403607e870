// Project: lightningnetwork/lnd (routing/missioncontrol.go MissionControl.processPaymentResult/GetProbability, routing/missioncontrol_store.go AddResult, routing/pathfind.go findPath in a graph read transaction, bbolt via kvdb), v0.12.x, March 2021 (issue #5104, PR #5116).
// Bug: pathfinding runs inside a bbolt read transaction, which holds the database mmap lock for reading, and asks mission control for every edge probability, which takes the MissionControl mutex. ReportPaymentFail/ReportPaymentSuccess held the MissionControl mutex while storing the payment result in the same database; when that write grows the file, bbolt's commit remaps it and needs the mmap lock for writing, so the payment result writer and the pathfinder wait on each other and lnd stops responding. The fix stores the result before taking the mission control lock.
package main

import (
	"fmt"
	"sync"
	"time"
)

// DB models bbolt as used by kvdb: read transactions hold mmaplock.RLock for
// their whole life, writers serialize on rwlock and, when the data file must
// grow on commit, remap it under mmaplock.Lock.
type DB struct {
	rwlock   sync.Mutex
	mmaplock sync.RWMutex
	size     int
	mapped   int
	buckets  map[string][]string
}

type Tx struct {
	db       *DB
	writable bool
}

func (db *DB) View(fn func(tx *Tx) error) error {
	db.mmaplock.RLock()
	defer db.mmaplock.RUnlock()
	return fn(&Tx{db: db})
}

func (db *DB) Update(fn func(tx *Tx) error) error {
	db.rwlock.Lock()
	defer db.rwlock.Unlock()
	if err := fn(&Tx{db: db, writable: true}); err != nil {
		return err
	}
	if db.size > db.mapped { // commit: the file grew, remap it
		db.mmaplock.Lock()
		db.mapped = db.size * 2
		db.mmaplock.Unlock()
	}
	return nil
}

type paymentResult struct {
	id      uint64
	success bool
	pair    string
}

// missionControlStore persists payment results in channel.db.
type missionControlStore struct{ db *DB }

func (b *missionControlStore) AddResult(rp *paymentResult) error {
	return b.db.Update(func(tx *Tx) error {
		tx.db.buckets["missioncontrol-results"] = append(tx.db.buckets["missioncontrol-results"],
			fmt.Sprintf("%d:%s:%v", rp.id, rp.pair, rp.success))
		tx.db.size += 4096
		return nil
	})
}

type MissionControl struct {
	store     *missionControlStore
	lastPairs map[string]float64
	sync.Mutex
}

func (m *MissionControl) processPaymentResult(result *paymentResult) error {
	m.Lock()
	defer m.Unlock()

	if err := m.store.AddResult(result); err != nil {
		return err
	}
	m.applyPaymentResult(result)
	return nil
}

func (m *MissionControl) applyPaymentResult(result *paymentResult) {
	if result.success {
		m.lastPairs[result.pair] = 0.95
	} else {
		m.lastPairs[result.pair] = 0.05
	}
}

// ReportPaymentFail is called by the payment lifecycle of an attempt.
func (m *MissionControl) ReportPaymentFail(paymentID uint64, pair string) error {
	return m.processPaymentResult(&paymentResult{id: paymentID, pair: pair})
}

// GetProbability is the ProbabilitySource used by pathfinding.
func (m *MissionControl) GetProbability(from, to string, amt uint64) float64 {
	m.Lock()
	defer m.Unlock()
	if p, ok := m.lastPairs[from+"->"+to]; ok {
		return p
	}
	return 0.6 // apriori hop probability
}

type graphParams struct {
	db          *DB
	probability func(from, to string, amt uint64) float64
}

// findPath walks the channel graph inside one read transaction.
func findPath(g *graphParams, source, target string, amt uint64) ([]string, error) {
	var path []string
	err := g.db.View(func(tx *Tx) error {
		for _, edge := range tx.db.buckets["graph-edges"] {
			time.Sleep(30 * time.Millisecond) // dijkstra over the edges of a node
			if p := g.probability(source, edge, amt); p > 0.1 {
				path = append(path, edge)
			}
		}
		path = append(path, target)
		return nil
	})
	return path, err
}

func main() {
	db := &DB{mapped: 2048, buckets: map[string][]string{"graph-edges": {"carol", "dave"}}}
	mc := &MissionControl{store: &missionControlStore{db: db}, lastPairs: map[string]float64{}}
	g := &graphParams{db: db, probability: mc.GetProbability}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // payment B: paymentSession.RequestRoute
		defer wg.Done()
		route, err := findPath(g, "alice", "erin", 50_000)
		fmt.Println("route", route, err)
	}()
	go func() { // payment A: attempt failed at bob->carol
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		fmt.Println("report fail:", mc.ReportPaymentFail(1, "bob->carol"))
	}()
	wg.Wait()
}
