// Project: dgraph-io/badger (v3, levels.go, level_handler.go, compaction.go)
// Issue: dgraph-io/badger PR #1744 "Fix(levels): Avoid a deadlock when acquiring read
// locks in levels" (picked up by dgraph in PR #8025, "Upgrade badger to fix deadlock").
//
// Bug: badger v3 started compacting the last level into itself (Lmax -> Lmax,
// picked by stale data size). doCompact sets cd.nextLevel = cd.thisLevel when
// thisLevel.isLastLevel(), so both fields of the compactDef point at the same
// *levelHandler, whose guard is an embedded sync.RWMutex. fillTables starts
// with cd.lockLevels(), which read-locks thisLevel (line 229) and then
// nextLevel (line 231): the same RWMutex read-locked twice by one
// goroutine. If, in between, another compactor that finished an L5 -> L6
// compaction calls nextLevel.replaceTables, its s.Lock() (line 97) queues
// behind the first read lock and, being a waiting writer, blocks the second
// RLock. The compactor waits for the writer, the writer waits for the
// compactor: the compactors and every reader of L6 hang.
// The fix takes the second read lock only when the two levels differ.
//
// The reproduction lets compactor 1 pause between the two read locks (the
// interleave hook) so that compactor 2's replaceTables is queued at that point.
package main

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

type Options struct {
	MaxLevels int
}

type DB struct {
	opt Options
	lc  *levelsController
}

type Table struct {
	id       uint64
	smallest string
	size     int64
	stale    int64
}

func (t *Table) ID() uint64       { return t.id }
func (t *Table) Smallest() string { return t.smallest }
func (t *Table) Size() int64      { return t.size }
func (t *Table) StaleDataSize() int64 {
	return t.stale
}

type levelHandler struct {
	// Guards tables, totalSize.
	sync.RWMutex

	// For level >= 1, tables are sorted by key ranges, which do not overlap.
	// For level 0, tables are sorted by time.
	tables         []*Table
	totalSize      int64
	totalStaleSize int64

	// The following are initialized once and const.
	level    int
	strLevel string
	db       *DB
}

func newLevelHandler(db *DB, level int) *levelHandler {
	return &levelHandler{
		level:    level,
		strLevel: fmt.Sprintf("l%d", level),
		db:       db,
	}
}

func (s *levelHandler) isLastLevel() bool {
	return s.level == s.db.opt.MaxLevels-1
}

func (s *levelHandler) addSize(t *Table) {
	s.totalSize += t.Size()
	s.totalStaleSize += t.StaleDataSize()
}

func (s *levelHandler) subtractSize(t *Table) {
	s.totalSize -= t.Size()
	s.totalStaleSize -= t.StaleDataSize()
}

// replaceTables will replace tables[left:right] with newTables. Note this EXCLUDES tables[right].
// You must call decr() to delete the old tables _after_ writing the update to the manifest.
func (s *levelHandler) replaceTables(toDel, toAdd []*Table) error {
	// Need to re-search the range of tables in this level to be replaced as other goroutines might
	// be changing it as well.  (They can't touch our tables, but if they add/remove other tables,
	// the indices get shifted around.)
	s.Lock() // We s.Unlock() below.

	toDelMap := make(map[uint64]struct{})
	for _, t := range toDel {
		toDelMap[t.ID()] = struct{}{}
	}
	var newTables []*Table
	for _, t := range s.tables {
		_, found := toDelMap[t.ID()]
		if !found {
			newTables = append(newTables, t)
			continue
		}
		s.subtractSize(t)
	}

	// Increase totalSize first.
	for _, t := range toAdd {
		s.addSize(t)
		newTables = append(newTables, t)
	}

	// Assign tables.
	s.tables = newTables
	sort.Slice(s.tables, func(i, j int) bool {
		return s.tables[i].Smallest() < s.tables[j].Smallest()
	})
	s.Unlock() // s.Unlock before we DecrRef tables -- that can be slow.
	return nil
}

func (s *levelHandler) deleteTables(toDel []*Table) error {
	s.Lock() // s.Unlock() below

	toDelMap := make(map[uint64]struct{})
	for _, t := range toDel {
		toDelMap[t.ID()] = struct{}{}
	}

	// Make a copy as iterators might be keeping a slice of tables.
	var newTables []*Table
	for _, t := range s.tables {
		_, found := toDelMap[t.ID()]
		if !found {
			newTables = append(newTables, t)
			continue
		}
		s.subtractSize(t)
	}
	s.tables = newTables

	s.Unlock() // Unlock s _before_ we DecrRef our tables, which can be slow.
	return nil
}

type keyRange struct {
	left, right string
	inf         bool
}

type levelCompactStatus struct {
	ranges  []keyRange
	delSize int64
}

type compactStatus struct {
	sync.RWMutex
	levels []*levelCompactStatus
	tables map[uint64]struct{}
}

type thisAndNextLevelRLocked struct{}

// compareAndAdd will check whether we can run this compactDef. That it doesn't overlap with any
// other running compaction. If it can be run, it would store this run in the compactStatus state.
func (cs *compactStatus) compareAndAdd(_ thisAndNextLevelRLocked, cd compactDef) bool {
	cs.Lock()
	defer cs.Unlock()

	tl := cd.thisLevel.level
	thisLevel := cs.levels[tl]
	thisLevel.ranges = append(thisLevel.ranges, cd.thisRange)
	thisLevel.delSize += cd.thisSize
	for _, t := range append(cd.top, cd.bot...) {
		cs.tables[t.ID()] = struct{}{}
	}
	return true
}

func (cs *compactStatus) delete(cd compactDef) {
	cs.Lock()
	defer cs.Unlock()

	tl := cd.thisLevel.level
	thisLevel := cs.levels[tl]
	thisLevel.delSize -= cd.thisSize
	thisLevel.ranges = nil
	for _, t := range append(cd.top, cd.bot...) {
		delete(cs.tables, t.ID())
	}
}

type targets struct {
	baseLevel int
	targetSz  []int64
	fileSz    []int64
}

type compactionPriority struct {
	level    int
	score    float64
	adjusted float64
	t        targets
}

type compactDef struct {
	compactorId int
	t           targets
	p           compactionPriority
	thisLevel   *levelHandler
	nextLevel   *levelHandler

	top []*Table
	bot []*Table

	thisRange keyRange
	nextRange keyRange

	thisSize int64
}

func (cd *compactDef) lockLevels() {
	cd.thisLevel.RLock()
	interleave()
	if cd.thisLevel.level != cd.nextLevel.level {
		cd.nextLevel.RLock()
	}
}

func (cd *compactDef) unlockLevels() {
	if cd.thisLevel.level != cd.nextLevel.level {
		cd.nextLevel.RUnlock()
	}
	cd.thisLevel.RUnlock()
}

type levelsController struct {
	nextFileID uint64 // Atomic

	// The following are initialized once and const.
	levels []*levelHandler
	kv     *DB

	cstatus compactStatus
}

func (s *levelsController) levelTargets() targets {
	t := targets{
		targetSz: make([]int64, len(s.levels)),
		fileSz:   make([]int64, len(s.levels)),
	}
	t.baseLevel = len(s.levels) - 1
	return t
}

// fillMaxLevelTables picks the table with the most stale data in the last
// level, to be rewritten into the last level itself.
func (s *levelsController) fillMaxLevelTables(tables []*Table, cd *compactDef) bool {
	sortedTables := make([]*Table, len(tables))
	copy(sortedTables, tables)
	sort.Slice(sortedTables, func(i, j int) bool {
		return sortedTables[i].StaleDataSize() > sortedTables[j].StaleDataSize()
	})
	if len(sortedTables) > 0 && sortedTables[0].StaleDataSize() == 0 {
		// This is a maxLevel to maxLevel compaction and we don't have any stale data.
		return false
	}
	cd.bot = []*Table{}
	cd.top = []*Table{sortedTables[0]}
	cd.thisSize = sortedTables[0].Size()
	cd.thisRange = keyRange{left: sortedTables[0].Smallest(), right: sortedTables[0].Smallest()}
	cd.nextRange = cd.thisRange
	return s.cstatus.compareAndAdd(thisAndNextLevelRLocked{}, *cd)
}

func (s *levelsController) fillTables(cd *compactDef) bool {
	cd.lockLevels()
	defer cd.unlockLevels()

	tables := make([]*Table, len(cd.thisLevel.tables))
	copy(tables, cd.thisLevel.tables)
	if len(tables) == 0 {
		return false
	}
	// We're doing a maxLevel to maxLevel compaction. Pick tables based on the stale data size.
	if cd.thisLevel.isLastLevel() {
		return s.fillMaxLevelTables(tables, cd)
	}
	t := tables[0]
	cd.thisSize = t.Size()
	cd.top = []*Table{t}
	return s.cstatus.compareAndAdd(thisAndNextLevelRLocked{}, *cd)
}

func (s *levelsController) fillTablesL0(cd *compactDef) bool {
	cd.lockLevels()
	defer cd.unlockLevels()

	cd.top = make([]*Table, len(cd.thisLevel.tables))
	copy(cd.top, cd.thisLevel.tables)
	if len(cd.top) == 0 {
		return false
	}
	cd.thisRange = keyRange{inf: true}
	return s.cstatus.compareAndAdd(thisAndNextLevelRLocked{}, *cd)
}

func (s *levelsController) reserveFileID() uint64 {
	id := atomic.AddUint64(&s.nextFileID, 1)
	return id - 1
}

func (s *levelsController) compactBuildTables(lev int, cd compactDef) ([]*Table, error) {
	var newTables []*Table
	for _, t := range append(cd.top, cd.bot...) {
		newTables = append(newTables, &Table{id: 1000 + s.reserveFileID(), smallest: t.Smallest(), size: t.Size() - t.StaleDataSize()})
	}
	return newTables, nil
}

func (s *levelsController) runCompactDef(id, l int, cd compactDef) (err error) {
	thisLevel := cd.thisLevel
	nextLevel := cd.nextLevel

	newTables, err := s.compactBuildTables(l, cd)
	if err != nil {
		return err
	}

	// See comment earlier in this function about the ordering of these ops, and the order in which
	// we access levels when reading.
	if err := nextLevel.replaceTables(cd.bot, newTables); err != nil {
		return err
	}
	if err := thisLevel.deleteTables(cd.top); err != nil {
		return err
	}
	return nil
}

var errFillTables = fmt.Errorf("Unable to fill tables")

// doCompact picks some table on level l and compacts it away to the next level.
func (s *levelsController) doCompact(id int, p compactionPriority) error {
	l := p.level
	if p.t.baseLevel == 0 {
		p.t = s.levelTargets()
	}

	cd := compactDef{
		compactorId: id,
		p:           p,
		t:           p.t,
		thisLevel:   s.levels[l],
	}

	// While picking tables to be compacted, both levels' tables are expected to
	// remain unchanged.
	if l == 0 {
		cd.nextLevel = s.levels[p.t.baseLevel]
		if !s.fillTablesL0(&cd) {
			return errFillTables
		}
	} else {
		cd.nextLevel = cd.thisLevel
		// We're not compacting the last level so pick the next level.
		if !cd.thisLevel.isLastLevel() {
			cd.nextLevel = s.levels[l+1]
		}
		if !s.fillTables(&cd) {
			return errFillTables
		}
	}
	defer s.cstatus.delete(cd) // Remove the ranges from compaction status.

	if err := s.runCompactDef(id, l, cd); err != nil {
		return err
	}
	return nil
}

// --- reproduction harness ---------------------------------------------------

var (
	compactorOneInLockLevels = make(chan struct{})
	interleaveOnce           sync.Once
)

// interleave marks the point between the two read locks of lockLevels: the
// first compactor to get here lets compactor 2 finish its L5 -> L6 compaction
// and gives its replaceTables time to queue its Lock.
func interleave() {
	interleaveOnce.Do(func() {
		close(compactorOneInLockLevels)
		time.Sleep(20 * time.Millisecond)
	})
}

func main() {
	db := &DB{opt: Options{MaxLevels: 7}}
	lc := &levelsController{kv: db}
	lc.levels = make([]*levelHandler, db.opt.MaxLevels)
	lc.cstatus.levels = make([]*levelCompactStatus, db.opt.MaxLevels)
	lc.cstatus.tables = make(map[uint64]struct{})
	for i := 0; i < db.opt.MaxLevels; i++ {
		lc.levels[i] = newLevelHandler(db, i)
		lc.cstatus.levels[i] = new(levelCompactStatus)
	}
	db.lc = lc

	// L6 holds a table with a lot of stale data: compactor 1 rewrites it into L6.
	l6 := lc.levels[6]
	for _, t := range []*Table{{id: 1, smallest: "a", size: 100, stale: 60}, {id: 2, smallest: "m", size: 100}} {
		l6.tables = append(l6.tables, t)
		l6.addSize(t)
	}
	// Compactor 2 already built the output of an L5 -> L6 compaction.
	l5Table := &Table{id: 3, smallest: "x", size: 10}
	lc.levels[5].tables = []*Table{l5Table}
	lc.levels[5].addSize(l5Table)
	l5ToL6 := compactDef{compactorId: 2, thisLevel: lc.levels[5], nextLevel: l6, top: []*Table{l5Table}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // compactor 1: Lmax -> Lmax
		defer wg.Done()
		err := lc.doCompact(1, compactionPriority{level: 6, score: 1.2})
		fmt.Println("compactor 1:", err)
	}()
	go func() { // compactor 2: finishes L5 -> L6
		defer wg.Done()
		<-compactorOneInLockLevels
		err := lc.runCompactDef(2, 5, l5ToL6)
		fmt.Println("compactor 2:", err)
	}()
	wg.Wait()
	fmt.Println("L6 tables:", len(l6.tables))
}
