// Project: coredns/coredns (plugin/file zone.go / lookup.go)
// Bug: Zone.Lookup holds z.RLock for the whole lookup and, when building the
//      additional section for a delegation, calls the exported Zone.Glue,
//      which takes z.RLock again. If the reload goroutine (Zone.Reload, on
//      SOA serial change) has queued z.Lock in between, the second RLock
//      waits behind the writer, and the writer waits for the first RLock.
// Fix: Lookup calls an unexported glue helper that assumes the read lock is
//      already held; only the exported entry point locks.

package b18corednszone_fixed

import (
	"strings"
	"sync"
	"testing"
	"time"
)

type RR struct {
	Name   string
	Type   string
	TTL    uint32
	Target string // NS target or address
}

type Apex struct {
	SOA    *RR
	NS     []RR
	Serial uint32
}

// testHookSearchTree lets tests stall a lookup after the read lock is taken.
var testHookSearchTree func()

type Zone struct {
	origin  string
	origLen int
	file    string
	tree    map[string][]RR
	Apex
	Expired bool

	sync.RWMutex

	TransferTo     []string
	ReloadInterval time.Duration
	reloadShutdown chan bool
}

func NewZone(name, file string) *Zone {
	return &Zone{origin: name, origLen: strings.Count(name, "."), file: file,
		tree: map[string][]RR{}, reloadShutdown: make(chan bool)}
}

func (z *Zone) Insert(r RR) {
	z.Lock()
	defer z.Unlock()
	z.tree[r.Name] = append(z.tree[r.Name], r)
}

// Glue returns any potential glue records for nsrrs.
func (z *Zone) Glue(nsrrs []RR) []RR {
	z.RLock()
	defer z.RUnlock()
	return z.glue(nsrrs)
}

// glue is Glue for callers that already hold z's read lock.
func (z *Zone) glue(nsrrs []RR) []RR {
	var glue []RR
	for _, ns := range nsrrs {
		if !strings.HasSuffix(ns.Target, z.origin) {
			continue
		}
		for _, rr := range z.tree[ns.Target] {
			if rr.Type == "A" || rr.Type == "AAAA" {
				glue = append(glue, rr)
			}
		}
	}
	return glue
}

// Lookup looks up qname and qtype in the zone. It returns the answer,
// authority and additional sections.
func (z *Zone) Lookup(qname, qtype string) (answer, ns, extra []RR, ok bool) {
	z.RLock()
	defer z.RUnlock()

	if z.Expired {
		return nil, nil, nil, false
	}
	if testHookSearchTree != nil {
		testHookSearchTree()
	}
	// Walk up the name looking for a delegation (zone cut).
	labels := strings.Split(strings.TrimSuffix(qname, "."), ".")
	for i := range labels {
		name := strings.Join(labels[i:], ".") + "."
		if name == z.origin {
			break
		}
		var cut []RR
		for _, rr := range z.tree[name] {
			if rr.Type == "NS" {
				cut = append(cut, rr)
			}
		}
		if len(cut) > 0 {
			return nil, cut, z.glue(cut), true
		}
	}
	for _, rr := range z.tree[qname] {
		if rr.Type == qtype {
			answer = append(answer, rr)
		}
	}
	return answer, z.Apex.NS, nil, len(answer) > 0
}

// Reload swaps in a freshly parsed copy of the zone when the serial changed.
func (z *Zone) Reload(fresh *Zone) bool {
	fresh.RLock()
	serial, tree, apex := fresh.Serial, fresh.tree, fresh.Apex
	fresh.RUnlock()

	z.Lock()
	defer z.Unlock()
	if serial <= z.Serial {
		return false
	}
	z.Apex = apex
	z.tree = tree
	return true
}

func loadZone(serial uint32) *Zone {
	z := NewZone("example.org.", "db.example.org")
	z.Apex = Apex{SOA: &RR{Name: "example.org.", Type: "SOA"}, Serial: serial,
		NS: []RR{{Name: "example.org.", Type: "NS", TTL: 3600, Target: "ns1.example.org."}}}
	z.Insert(RR{Name: "ns1.example.org.", Type: "A", TTL: 3600, Target: "192.0.2.53"})
	z.Insert(RR{Name: "sub.example.org.", Type: "NS", TTL: 3600, Target: "ns.sub.example.org."})
	z.Insert(RR{Name: "ns.sub.example.org.", Type: "A", TTL: 3600, Target: "192.0.2.54"})
	return z
}

func TestLookupDuringReload(t *testing.T) {
	z := loadZone(2024010101)
	fresh := loadZone(2024010102)

	inLookup := make(chan struct{})
	testHookSearchTree = func() {
		close(inLookup)
		time.Sleep(30 * time.Millisecond) // let the reloader queue its write lock
	}
	defer func() { testHookSearchTree = nil }()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // DNS query for a delegated name
		defer wg.Done()
		_, ns, extra, _ := z.Lookup("www.sub.example.org.", "A")
		if len(ns) != 1 || len(extra) != 1 {
			t.Errorf("referral: ns=%v extra=%v", ns, extra)
		}
	}()
	go func() { // reload ticker noticed a new SOA serial
		defer wg.Done()
		<-inLookup
		z.Reload(fresh)
	}()
	wg.Wait()
}
