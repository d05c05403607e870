// Modelled on Prometheus' scrape.Target (scrape/target.go): a target's health
// and last error are guarded by its own mutex, and its String method takes
// that mutex. The scrape loop updates it under the lock but only formats it
// after unlocking; the web/status handlers format it holding no lock.

package main

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

type TargetHealth string

const (
	HealthUnknown TargetHealth = "unknown"
	HealthGood    TargetHealth = "up"
	HealthBad     TargetHealth = "down"
)

type Target struct {
	job, instance string // immutable

	mu         sync.RWMutex
	health     TargetHealth
	lastError  error
	lastScrape time.Duration
	scrapes    int
}

func (t *Target) String() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	s := t.job + "/" + t.instance + " " + string(t.health) + " scrapes=" + strconv.Itoa(t.scrapes)
	if t.lastError != nil {
		s += " err=" + t.lastError.Error()
	}
	return s
}

func (t *Target) Health() TargetHealth {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.health
}

var errScrapeTimeout = errors.New("context deadline exceeded")

type scrapeLoop struct {
	target *Target
	logs   chan<- string
}

func (sl *scrapeLoop) report(dur time.Duration, err error) {
	sl.target.mu.Lock()
	sl.target.scrapes++
	sl.target.lastScrape = dur
	sl.target.lastError = err
	changed := false
	if err == nil && sl.target.health != HealthGood {
		sl.target.health, changed = HealthGood, true
	} else if err != nil && sl.target.health != HealthBad {
		sl.target.health, changed = HealthBad, true
	}
	sl.target.mu.Unlock()

	if changed {
		sl.logs <- fmt.Sprintf("target health changed: %v", sl.target)
	}
}

func (sl *scrapeLoop) run(n int, seed int) {
	for i := 0; i < n; i++ {
		var err error
		if (i+seed)%5 == 0 {
			err = errScrapeTimeout
		}
		sl.report(time.Duration(i)*time.Millisecond, err)
	}
}

func main() {
	targets := make([]*Target, 4)
	for i := range targets {
		targets[i] = &Target{job: "node", instance: fmt.Sprintf("host%d:9100", i), health: HealthUnknown}
	}

	logs := make(chan string, 16)
	logDone := make(chan int)
	go func() {
		n := 0
		for range logs {
			n++
		}
		logDone <- n
	}()

	var loops sync.WaitGroup
	for i, t := range targets {
		loops.Add(1)
		go func(i int, t *Target) {
			defer loops.Done()
			(&scrapeLoop{target: t, logs: logs}).run(100, i)
		}(i, t)
	}

	// /api/v1/targets handler: renders every target, holding no lock.
	var handlers sync.WaitGroup
	for h := 0; h < 2; h++ {
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			for i := 0; i < 30; i++ {
				for _, t := range targets {
					_ = fmt.Sprint(t)
					_ = t.Health()
				}
			}
		}()
	}

	loops.Wait()
	handlers.Wait()
	close(logs)
	fmt.Printf("health transitions logged: %d\n", <-logDone)
	for _, t := range targets {
		fmt.Println(t)
	}
}
