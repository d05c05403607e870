// Project: cockroachdb/cockroach (pkg/util/log/clog.go, the glog fork), October 2016.
// Bug: loggingT.outputLogEntry holds l.mu while lazily creating the log file, and when createFile fails (missing log
// dir, full disk) it calls l.exit(err), which takes l.mu again before flushing and exiting, so the node hangs instead
// of exiting (cockroach #9935, approximate; fixed by turning exit into exitLocked, "l.mu is held", without locking).
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

type Severity int32

const (
	Severity_INFO Severity = iota
	Severity_WARNING
	Severity_ERROR
	Severity_FATAL
)

// OrigStderr points to the original stderr stream.
var OrigStderr = os.Stderr

// logExitFunc provides a simple mechanism to override the default behavior
// of exiting on error. Used in testing and to guarantee we reach a required exit
// for fatal logs.
var logExitFunc func(error)

// flushSyncWriter is the interface satisfied by logging destinations.
type flushSyncWriter interface {
	Flush() error
	Sync() error
	io.Writer
}

// loggingT collects all the global state of the logging setup.
type loggingT struct {
	// mu protects the remaining elements of this structure and is
	// used to synchronize logging.
	mu sync.Mutex
	// file holds the writer for the log file (one for all severities here).
	file flushSyncWriter
	// Directory prefix where to store this logger's files.
	logDir string
	// exitFunc is os.Exit in production.
	exitFunc func(int)
	// Level flag for output to files.
	fileThreshold Severity
}

var logging = loggingT{exitFunc: os.Exit}

// syncBuffer joins a bufio.Writer to its underlying file, providing access to the
// file's Sync method and providing a wrapper for the Write method that provides log
// file rotation.
type syncBuffer struct {
	logger *loggingT
	*bufio.Writer
	file   *os.File
	nbytes uint64 // The number of bytes written to this file
}

func (sb *syncBuffer) Sync() error { return sb.file.Sync() }

func (sb *syncBuffer) Write(p []byte) (n int, err error) {
	n, err = sb.Writer.Write(p)
	sb.nbytes += uint64(n)
	if err != nil {
		sb.logger.exitLocked(err)
	}
	return
}

// create creates a new log file and returns the file and its filename.
func create(dir string, t time.Time) (*os.File, string, error) {
	name := fmt.Sprintf("cockroach.%s.log", t.Format("20060102-150405"))
	fname := filepath.Join(dir, name)
	f, err := os.Create(fname)
	return f, fname, err
}

// createFile creates the log file. l.mu is held.
func (l *loggingT) createFile() error {
	f, _, err := create(l.logDir, time.Now())
	if err != nil {
		return err
	}
	l.file = &syncBuffer{logger: l, Writer: bufio.NewWriterSize(f, 256*1024), file: f}
	return nil
}

// outputLogEntry marshals a log entry proto into bytes, and writes
// the data to the log files. If a trace location is set, stack traces
// are added to the entry before marshaling.
func (l *loggingT) outputLogEntry(s Severity, file string, line int, msg string) {
	data := []byte(fmt.Sprintf("%c%s %s:%d  %s\n", "IWEF"[s], time.Now().Format("060102 15:04:05.000000"), file, line, msg))

	l.mu.Lock()
	if s >= l.fileThreshold {
		if l.file == nil {
			if err := l.createFile(); err != nil {
				// Make sure the message appears somewhere.
				_, _ = OrigStderr.Write(data)
				l.exitLocked(err)
				l.mu.Unlock()
				return
			}
		}
		if _, err := l.file.Write(data); err != nil {
			panic(err)
		}
	}
	l.mu.Unlock()
}

// flushAll flushes all the logs and attempts to "sync" their data to disk.
// l.mu is held.
func (l *loggingT) flushAll() {
	if l.file != nil {
		_ = l.file.Flush() // ignore error
		_ = l.file.Sync()  // ignore error
	}
}

// exitLocked is called if there is trouble creating or writing log files.
// It flushes the logs and exits the program; there's no point in hanging around.
// l.mu is held.
func (l *loggingT) exitLocked(err error) {
	fmt.Fprintf(OrigStderr, "log: exiting because of error: %s\n", err)
	// If logExitFunc is set, we do that instead of exiting.
	if logExitFunc != nil {
		logExitFunc(err)
		return
	}
	l.flushAll()
	l.exitFunc(2)
}

// Infof logs to the INFO log.
func Infof(format string, args ...interface{}) {
	logging.outputLogEntry(Severity_INFO, "server/server.go", 512, fmt.Sprintf(format, args...))
}

func main() {
	// --log-dir points at a directory that does not exist (or a full disk).
	logging.logDir = filepath.Join(os.TempDir(), "b76-no-such-dir", "logs")
	exitCode := -1
	logging.exitFunc = func(code int) { exitCode = code } // the node would os.Exit(2) here

	Infof("starting cockroach node on %s", "localhost:26257")
	fmt.Println("logging gave up with exit code", exitCode)
}
