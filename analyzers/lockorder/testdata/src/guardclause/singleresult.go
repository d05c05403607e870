package guardclause

import (
	"errors"
	"sync"
)

// The error check of a call whose only result is the error (`if err :=
// e.flush(name); err != nil { return err }`) is a guard clause like one
// on a (value, error) pair: what the function does after it is its
// success path, not a conditional step (influxdb's DeleteMeasurement,
// whose second pass runs under the field set's lock and reaches the
// engine lock two branches down, against the snapshot's engine read
// lock held into the field set).

type FieldSet struct {
	mu     sync.RWMutex
	fields map[string]int
}

func (fs *FieldSet) CreateIfMissing(name string) {
	fs.mu.RLock()
	_, ok := fs.fields[name]
	fs.mu.RUnlock()
	if !ok {
		fs.mu.Lock()
		fs.fields[name] = 0
		fs.mu.Unlock()
	}
}

func (fs *FieldSet) DeleteWithLock(name string, fn func() error) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fn(); err != nil {
		return err
	}
	delete(fs.fields, name)
	return nil
}

type Engine struct {
	mu       sync.RWMutex
	workers  int
	fieldset *FieldSet
}

func (e *Engine) disableCompactions() {
	e.mu.Lock()
	e.workers++
	e.mu.Unlock()
}

func (e *Engine) deleteRange(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	e.disableCompactions()
	return nil
}

func (e *Engine) deleteMeasurement(name string) error {
	if keys := []string{name}; len(name) > 0 {
		return e.deleteRange(keys)
	}
	return nil
}

func (e *Engine) DeleteMeasurement(name string) error {
	if err := e.deleteMeasurement(name); err != nil {
		return err
	}
	return e.fieldset.DeleteWithLock(name, func() error {
		return e.deleteMeasurement(name)
	})
}

func (e *Engine) WriteSnapshot(names []string) error {
	if len(names) == 0 {
		return errors.New("empty snapshot")
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, n := range names {
		e.fieldset.CreateIfMissing(n) // want `lock order inversion: FieldSet.mu then Engine.mu in FieldSet.DeleteWithLock .*via Engine.DeleteMeasurement.func1 -> Engine.deleteMeasurement -> Engine.deleteRange -> Engine.disableCompactions.* but Engine.mu then FieldSet.mu in Engine.WriteSnapshot .*\[lock-order\]`
	}
	return nil
}

// The fix: the second pass runs before the field set's lock, whose
// callback only deletes the fields.
func (e *Engine) DeleteMeasurementFixed(name string) error {
	if err := e.deleteMeasurement(name); err != nil {
		return err
	}
	return e.fieldset.DeleteWithLock(name, func() error { return nil })
}

func runEngine(e *Engine) {
	go e.WriteSnapshot([]string{"cpu"})
	go e.DeleteMeasurement("cpu")
	go e.DeleteMeasurementFixed("mem")
}
