// Pattern: Docker daemon/logger "docker logs" without --follow (jsonfilelog
// ReadLogs / LogWatcher): a reader is handed the existing log history, replayed
// into its channel before the reader goroutine exists (channel sized to the
// history), and Append's live fan-out runs only in phases when no reader is
// registered (before readers start / after every reader has finished).
package main

import (
	"fmt"
	"strings"
	"sync"
)

type Entry struct {
	Seq  int
	Line string
}

type Journal struct {
	mu      sync.Mutex
	entries []Entry
	readers map[int]chan Entry
	nextID  int
}

func NewJournal() *Journal { return &Journal{readers: map[int]chan Entry{}} }

// Append records an entry and fans it out to followers under the lock.
func (j *Journal) Append(line string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := Entry{Seq: len(j.entries) + 1, Line: line}
	j.entries = append(j.entries, e)
	for _, ch := range j.readers {
		ch <- e
	}
}

// ReadLogs registers a reader and replays the whole history into its channel.
func (j *Journal) ReadLogs() (int, <-chan Entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.nextID++
	ch := make(chan Entry, len(j.entries))
	for _, e := range j.entries {
		ch <- e
	}
	j.readers[j.nextID] = ch
	return j.nextID, ch
}

func (j *Journal) Len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.entries)
}

// Done unregisters a reader; its channel is closed so late ranges end.
func (j *Journal) Done(id int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if ch, ok := j.readers[id]; ok {
		delete(j.readers, id)
		close(ch)
	}
}

func tail(j *Journal) []int {
	var wg sync.WaitGroup
	counts := make([]int, 3)
	for r := 0; r < 3; r++ {
		id, ch := j.ReadLogs()
		wg.Add(1)
		go func(r, id int, ch <-chan Entry) {
			defer wg.Done()
			defer j.Done(id)
			want := cap(ch)
			if want == 0 {
				return
			}
			for e := range ch {
				if strings.Contains(e.Line, "error") {
					counts[r]++
				}
				if e.Seq > j.Len() { // consult the journal while handling
					panic("entry from the future")
				}
				if e.Seq == want {
					return
				}
			}
		}(r, id, ch)
	}
	wg.Wait() // no Append while readers are registered
	return counts
}

func main() {
	j := NewJournal()
	for round := 0; round < 3; round++ {
		for i := 0; i < 10; i++ {
			lvl := "info"
			if i%4 == 0 {
				lvl = "error"
			}
			j.Append(fmt.Sprintf("round=%d level=%s msg=%d", round, lvl, i))
		}
		fmt.Println("round", round, "errors seen by readers:", tail(j))
	}
	fmt.Println("total entries:", j.Len())
}
