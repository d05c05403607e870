package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Group runs functions in goroutines and collects the first error.
type Group struct {
	wg      sync.WaitGroup
	errOnce sync.Once
	err     error
}

func (g *Group) Go(f func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := f(); err != nil {
			g.errOnce.Do(func() { g.err = err })
		}
	}()
}

func (g *Group) Wait() error {
	g.wg.Wait()
	return g.err
}

// Indexer builds a word count index from documents using a worker group.
type Indexer struct {
	mu       sync.Mutex
	docs     []string
	counts   map[string]int
	indexing bool
	runs     int
}

func NewIndexer(docs []string) *Indexer {
	return &Indexer{docs: docs, counts: make(map[string]int)}
}

func (ix *Indexer) record(word string) {
	ix.mu.Lock()
	ix.counts[word]++
	ix.mu.Unlock()
}

// Rebuild snapshots the documents under the lock, then waits for the
// workers (which call record and take ix.mu) after releasing it.
func (ix *Indexer) Rebuild() error {
	ix.mu.Lock()
	if ix.indexing {
		ix.mu.Unlock()
		return errors.New("rebuild already running")
	}
	ix.indexing = true
	docs := append([]string(nil), ix.docs...)
	ix.counts = make(map[string]int)
	ix.mu.Unlock()

	var g Group
	for _, d := range docs {
		d := d
		g.Go(func() error {
			if d == "" {
				return errors.New("empty document")
			}
			for _, w := range strings.Fields(d) {
				ix.record(strings.ToLower(w))
			}
			return nil
		})
	}
	err := g.Wait()

	ix.mu.Lock()
	ix.indexing = false
	ix.runs++
	ix.mu.Unlock()
	return err
}

func (ix *Indexer) Count(w string) int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.counts[w]
}

func main() {
	ix := NewIndexer([]string{
		"the quick brown fox",
		"jumps over the lazy dog",
		"The end",
	})
	if err := ix.Rebuild(); err != nil {
		fmt.Println("error:", err)
		return
	}
	if err := ix.Rebuild(); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("the =", ix.Count("the"), "fox =", ix.Count("fox"), "runs =", ix.runs)
}
