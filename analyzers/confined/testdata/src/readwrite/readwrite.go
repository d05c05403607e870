// Package readwrite: reads count as well as writes; unannotated fields
// are never reported; copies taken on the owner are not owned (rule 6).
package readwrite

import (
	"fmt"

	"github.com/confinelint/confinelint/confine"
)

type Stats struct {
	owner  confine.Owner
	hits   int //confined:control
	misses int
	in     chan int
}

// total counts every hit.
//
//confined:control
var total int

//confined:entry
func (s *Stats) run() {
	s.owner.Bind()
	for n := range s.in {
		s.hits += n
		s.misses++
		total++
		s.snapshot()
	}
	go s.monitor()
	go bump()
}

func (s *Stats) monitor() {
	fmt.Println(s.hits) // want `s.hits is confined to control but read on the goroutine started by the go statement: Stats.monitor -> s.hits`
	s.misses++
	fmt.Println(total) // want `total is confined to control but read on the goroutine started by the go statement: Stats.monitor -> total`
}

func bump() {
	total++ // want `total is confined to control but written on the goroutine started by the go statement: bump -> total`
}

// snapshot copies on the control goroutine; the copy is the spawned
// goroutine's own.
func (s *Stats) snapshot() {
	n := s.hits
	go func() { fmt.Println(n) }()
}

func newStats() *Stats { return &Stats{in: make(chan int)} }
