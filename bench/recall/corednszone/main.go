// coredns plugin/file: Zone.Lookup held the zone's read lock and, while
// chasing a CNAME into the same zone, called a helper that took the read
// lock again. When the zone reloader (z.Lock in Reload) queued between the
// two RLocks, the second RLock waited for the writer and the writer waited
// for the first RLock -> deadlock. Fixed by having the helper assume the lock
// is already held.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// RR is a resource record.
type RR struct {
	Type   string
	Target string
}

// Zone is one authoritative zone.
type Zone struct {
	origin  string
	mu      sync.RWMutex
	records map[string][]RR
}

func withRLock(mu *sync.RWMutex, f func()) {
	mu.RLock()
	defer mu.RUnlock()
	f()
}

// Lookup answers name, following in-zone CNAMEs one level.
func (z *Zone) Lookup(name string) []RR {
	var out []RR
	withRLock(&z.mu, func() {
		rrs := z.records[name]
		out = append(out, rrs...)
		for _, rr := range rrs {
			if rr.Type == "CNAME" {
				out = append(out, z.chase(rr.Target)...)
			}
		}
	})
	return out
}

func (z *Zone) chase(target string) []RR {
	z.mu.RLock()
	defer z.mu.RUnlock()
	return z.records[target]
}

// Reload re-reads the zone file every interval until ctx is done.
func (z *Zone) Reload(ctx context.Context, interval time.Duration, load func() map[string][]RR) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			recs := load()
			z.mu.Lock()
			z.records = recs
			z.mu.Unlock()
		}
	}
}

func loadZone() map[string][]RR {
	return map[string][]RR{
		"www.example.org.": {{Type: "CNAME", Target: "web.example.org."}},
		"web.example.org.": {{Type: "A", Target: "192.0.2.10"}},
	}
}

func main() {
	z := &Zone{origin: "example.org.", records: loadZone()}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		z.Reload(ctx, 100*time.Microsecond, loadZone)
	}()
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_ = z.Lookup("www.example.org.")
			}
		}()
	}
	wg.Wait()
	fmt.Println("served", z.origin)
}
