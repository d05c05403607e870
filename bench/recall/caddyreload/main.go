// Like caddy config reload (caddy.changeConfig / unsyncedDecodeAndRun):
// the config mutex is released early on the success path and a deferred
// closure unlocks it only if that has not happened yet. A sync.Once sets up
// the logger under logMu, a lock the Do caller never holds.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type Config struct {
	Version int
	Apps    []string
}

type Instance struct {
	rawCfgMu sync.Mutex
	current  *Config
	reloads  int

	logOnce sync.Once
	logMu   sync.Mutex
	logs    []string
}

func (in *Instance) logf(format string, args ...any) {
	in.logOnce.Do(func() {
		in.logMu.Lock()
		in.logs = append(in.logs, "logger initialized")
		in.logMu.Unlock()
	})
	in.logMu.Lock()
	in.logs = append(in.logs, fmt.Sprintf(format, args...))
	in.logMu.Unlock()
}

var errStale = errors.New("stale config version")

// Load swaps in cfg and then stops the old apps without holding rawCfgMu.
func (in *Instance) Load(cfg *Config) (err error) {
	in.rawCfgMu.Lock()
	unlocked := false
	defer func() {
		if !unlocked {
			in.rawCfgMu.Unlock()
		}
	}()

	if in.current != nil && cfg.Version <= in.current.Version {
		return errStale // deferred closure unlocks
	}
	if len(cfg.Apps) == 0 {
		return errors.New("empty config") // deferred closure unlocks
	}
	old := in.current
	in.current = cfg
	in.reloads++

	in.rawCfgMu.Unlock()
	unlocked = true

	// Stopping old apps may be slow and logs; done outside rawCfgMu.
	if old != nil {
		for _, a := range old.Apps {
			in.logf("stopping %s from v%d", a, old.Version)
		}
	}
	in.logf("running v%d", cfg.Version)
	return nil
}

func (in *Instance) Stats() (int, int) {
	in.rawCfgMu.Lock()
	r := in.reloads
	in.rawCfgMu.Unlock()
	in.logMu.Lock()
	defer in.logMu.Unlock()
	return r, len(in.logs)
}

func main() {
	in := &Instance{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for v := 1; v <= 40; v++ {
				cfg := &Config{Version: v*4 + g, Apps: []string{"http", "tls"}}
				if v%10 == 0 {
					cfg.Apps = nil
				}
				_ = in.Load(cfg)
			}
		}(g)
	}
	wg.Wait()
	reloads, logs := in.Stats()
	fmt.Println("reloads:", reloads, "log lines:", logs)
}
