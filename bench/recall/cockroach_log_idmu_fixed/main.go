// cockroach pkg/util/log: when a log call rotates the output file, the file
// sink writes start lines via getStartLines, which holds logging.idMu.RLock()
// while calling makeStartLine -> makeEntry, and makeEntry RLocks idMu again.
// If server init calls SetClusterID (idMu.Lock) between the two RLocks, the
// writer waits for the first reader and the nested RLock waits behind the
// writer. cockroachdb/cockroach#71366, fixed in cockroachdb/cockroach#71406.
// Fixed twin: getStartLines copies the identifiers under a short RLock and
// builds the start lines after releasing it.
package main

import (
	"fmt"
	"sync"
	"time"
)

type loggingT struct {
	idMu struct {
		sync.RWMutex
		clusterID string
		nodeID    int32
	}
}

var logging loggingT

type logEntry struct {
	ts        int64
	clusterID string
	nodeID    int32
	msg       string
}

func makeEntry(msg string) logEntry {
	logging.idMu.RLock()
	defer logging.idMu.RUnlock()
	return logEntry{ts: time.Now().UnixNano(), clusterID: logging.idMu.clusterID, nodeID: logging.idMu.nodeID, msg: msg}
}

func makeStartLine(format string, args ...interface{}) logEntry {
	return makeEntry(fmt.Sprintf(format, args...))
}

func getStartLines(now time.Time) []logEntry {
	logging.idMu.RLock()
	clusterID := logging.idMu.clusterID
	logging.idMu.RUnlock()

	lines := []logEntry{makeStartLine("file created at: %s", now.Format(time.RFC3339))}
	if clusterID != "" {
		lines = append(lines, makeStartLine("clusterID: %s", clusterID))
	}
	return lines
}

// SetClusterID is called by server startup once the cluster ID is known.
func SetClusterID(id string) {
	logging.idMu.Lock()
	defer logging.idMu.Unlock()
	logging.idMu.clusterID = id
}

type fileSink struct {
	mu      sync.Mutex
	nbytes  int
	maxSize int
	buf     []logEntry
}

func (l *fileSink) output(e logEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nbytes+len(e.msg) > l.maxSize {
		l.rotateFileLocked(time.Now())
	}
	l.buf = append(l.buf, e)
	l.nbytes += len(e.msg)
}

func (l *fileSink) rotateFileLocked(now time.Time) {
	l.buf = append(l.buf[:0], getStartLines(now)...)
	l.nbytes = 0
}

func main() {
	sinks := []*fileSink{{maxSize: 64}, {maxSize: 64}}
	var wg sync.WaitGroup
	for i, sink := range sinks {
		wg.Add(1)
		go func(i int, sink *fileSink) {
			defer wg.Done()
			for n := 0; n < 100000; n++ {
				sink.output(makeEntry(fmt.Sprintf("[n%d] processed raft ready %d", i, n)))
			}
		}(i, sink)
	}
	// Server initialization (and tests calling TestingClearServerIdentifiers).
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; n < 100000; n++ {
			SetClusterID(fmt.Sprintf("6f2c0e57-%04d", n%10000))
		}
	}()
	wg.Wait()
	fmt.Println("logging done; clusterID", logging.idMu.clusterID)
}
