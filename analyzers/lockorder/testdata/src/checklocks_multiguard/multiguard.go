// Package checklocks_multiguard: a field with several guards needs all of
// them; each missing lock is one finding.
package checklocks_multiguard

import "sync"

type table struct {
	readMu  sync.Mutex
	writeMu sync.Mutex
	// +checklocks:readMu
	// +checklocks:writeMu
	rows int
}

func (t *table) both() {
	t.readMu.Lock()
	t.writeMu.Lock()
	t.rows++
	t.writeMu.Unlock()
	t.readMu.Unlock()
}

func (t *table) onlyOne() {
	t.readMu.Lock()
	t.rows++ // want `write to table.rows without holding table.writeMu \[guardedby\]`
	t.readMu.Unlock()
}

func (t *table) none() int {
	return t.rows // want `read of table.rows without holding table.readMu \[guardedby\]` `read of table.rows without holding table.writeMu \[guardedby\]`
}
