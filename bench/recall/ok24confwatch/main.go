// Pattern: a config watcher whose read paths take the RWMutex read lock and
// call helpers that require mu to be held and do not lock themselves. Watch
// is a writer that never calls back. Update delivers the Validate phase under
// the write lock and the Applied phase after unlocking; watchers branch on
// the phase and only call the locking Get/PoolBounds/Version API for Applied.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

type Phase int

const (
	PhaseValidate Phase = iota
	PhaseApplied
)

type Change struct {
	Phase   Phase
	Key     string
	Value   string
	Version int
}

type Watcher func(Change) error

type Config struct {
	mu       sync.RWMutex
	values   map[string]string
	version  int
	watchers []Watcher
}

func NewConfig(initial map[string]string) *Config {
	c := &Config{values: map[string]string{}}
	for k, v := range initial {
		c.values[k] = v
	}
	return c
}

func (c *Config) Watch(w Watcher) {
	c.mu.Lock()
	c.watchers = append(c.watchers, w)
	c.mu.Unlock()
}

// getLocked must hold mu.
func (c *Config) getLocked(key, def string) string {
	if v, ok := c.values[key]; ok {
		return v
	}
	return def
}

// intLocked must hold mu.
func (c *Config) intLocked(key string, def int) int {
	n, err := strconv.Atoi(c.getLocked(key, ""))
	if err != nil {
		return def
	}
	return n
}

func (c *Config) Get(key string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.getLocked(key, "")
}

func (c *Config) PoolBounds() (lo, hi int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.intLocked("pool.min", 1), c.intLocked("pool.max", 10)
}

func (c *Config) Version() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.version
}

func (c *Config) Update(key, value string) error {
	c.mu.Lock()
	ws := append([]Watcher(nil), c.watchers...)
	for _, w := range ws {
		if err := w(Change{Phase: PhaseValidate, Key: key, Value: value, Version: c.version + 1}); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	c.values[key] = value
	c.version++
	applied := Change{Phase: PhaseApplied, Key: key, Value: value, Version: c.version}
	c.mu.Unlock()

	for _, w := range ws {
		_ = w(applied)
	}
	return nil
}

func main() {
	cfg := NewConfig(map[string]string{"pool.min": "2", "pool.max": "8"})
	var mu sync.Mutex
	appliedSeen := 0
	rejected := 0

	cfg.Watch(func(ch Change) error {
		switch ch.Phase {
		case PhaseValidate:
			if _, err := strconv.Atoi(ch.Value); err != nil {
				return fmt.Errorf("%s: not a number: %q", ch.Key, ch.Value)
			}
			return nil
		case PhaseApplied:
			lo, hi := cfg.PoolBounds()
			_ = cfg.Get(ch.Key)
			if cfg.Version() < ch.Version || lo < 0 || hi < 0 {
				return fmt.Errorf("stale")
			}
			mu.Lock()
			appliedSeen++
			mu.Unlock()
		}
		return nil
	})

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				val := strconv.Itoa(w + i)
				if i%5 == 0 {
					val = "bad"
				}
				if err := cfg.Update("pool.max", val); err != nil {
					mu.Lock()
					rejected++
					mu.Unlock()
				}
				cfg.PoolBounds()
			}
		}(w)
	}
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if cfg.Version() != 80 || appliedSeen != 80 || rejected != 20 {
		fmt.Println("unexpected", cfg.Version(), appliedSeen, rejected)
		os.Exit(1)
	}
	fmt.Println("version:", cfg.Version(), "applied:", appliedSeen, "rejected:", rejected)
}
