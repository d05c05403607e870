// Project: sirupsen/logrus (entry.go, logger.go), v1.5.0, March to May 2020.
// Bug: PR #1047 ("fix race conditions on entry") made Entry.WithFields take entry.Logger.mu, but Entry.write already holds Logger.mu while it calls Formatter.Format; a wrapping formatter such as onrik/logrus/filename adds the caller with entry.WithField inside Format, so the first log line re-locks the logger mutex and the goroutine hangs, as does every other goroutine that logs afterwards (issues #1120, #1122, #1128; fixed in v1.6.0 by PR #1131 "Revert #1047", which drops the lock from WithFields).
package b115logruswithfields

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"
)

type Level uint32

const (
	PanicLevel Level = iota
	FatalLevel
	ErrorLevel
	WarnLevel
	InfoLevel
	DebugLevel
)

type Fields map[string]interface{}

// Formatter is the logrus formatter interface.
type Formatter interface {
	Format(*Entry) ([]byte, error)
}

// MutexWrap is the logger's lock, which SetNoLock can disable.
type MutexWrap struct {
	lock     sync.Mutex
	disabled bool
}

func (mw *MutexWrap) Lock() {
	if !mw.disabled {
		mw.lock.Lock()
	}
}

func (mw *MutexWrap) Unlock() {
	if !mw.disabled {
		mw.lock.Unlock()
	}
}

type Logger struct {
	Out          io.Writer
	Formatter    Formatter
	ReportCaller bool
	Level        Level
	mu           MutexWrap
	entryPool    sync.Pool
}

type Entry struct {
	Logger  *Logger
	Data    Fields
	Time    time.Time
	Level   Level
	Message string
	Buffer  *bytes.Buffer
	err     string
}

func NewEntry(logger *Logger) *Entry {
	return &Entry{Logger: logger, Data: make(Fields, 6)}
}

func (logger *Logger) newEntry() *Entry {
	entry, ok := logger.entryPool.Get().(*Entry)
	if ok {
		return entry
	}
	return NewEntry(logger)
}

func (logger *Logger) releaseEntry(entry *Entry) {
	entry.Data = map[string]interface{}{}
	logger.entryPool.Put(entry)
}

func (logger *Logger) Info(args ...interface{}) {
	if logger.Level >= InfoLevel {
		entry := logger.newEntry()
		entry.Info(args...)
		logger.releaseEntry(entry)
	}
}

// WithField adds a single field to the Entry.
func (entry *Entry) WithField(key string, value interface{}) *Entry {
	return entry.WithFields(Fields{key: value})
}

// WithFields adds a map of fields to the Entry.
func (entry *Entry) WithFields(fields Fields) *Entry {
	entry.Logger.mu.Lock() // added by #1047 to protect entry.Data
	defer entry.Logger.mu.Unlock()
	data := make(Fields, len(entry.Data)+len(fields))
	for k, v := range entry.Data {
		data[k] = v
	}
	for k, v := range fields {
		data[k] = v
	}
	return &Entry{Logger: entry.Logger, Data: data, Time: entry.Time, err: entry.err}
}

func (entry *Entry) Info(args ...interface{}) {
	if entry.Logger.Level >= InfoLevel {
		entry.log(InfoLevel, fmt.Sprint(args...))
	}
}

// log takes a value receiver, as in logrus, so it works on a copy of the entry.
func (entry Entry) log(level Level, msg string) {
	if entry.Time.IsZero() {
		entry.Time = time.Now()
	}
	entry.Level = level
	entry.Message = msg
	entry.Logger.mu.Lock()
	reportCaller := entry.Logger.ReportCaller
	entry.Logger.mu.Unlock()
	if reportCaller {
		entry.Data["caller"] = "unknown"
	}
	entry.Buffer = new(bytes.Buffer)
	entry.write()
	entry.Buffer = nil
}

func (entry *Entry) write() {
	entry.Logger.mu.Lock()
	defer entry.Logger.mu.Unlock()
	serialized, err := entry.Logger.Formatter.Format(entry)
	if err != nil {
		fmt.Fprintf(entry.Logger.Out, "Failed to obtain reader, %v\n", err)
		return
	}
	if _, err = entry.Logger.Out.Write(serialized); err != nil {
		fmt.Fprintf(entry.Logger.Out, "Failed to write to log, %v\n", err)
	}
}

// TextFormatter is a reduced logrus TextFormatter (key=value output).
type TextFormatter struct{}

func (f *TextFormatter) Format(entry *Entry) ([]byte, error) {
	b := entry.Buffer
	if b == nil {
		b = &bytes.Buffer{}
	}
	keys := make([]string, 0, len(entry.Data))
	for k := range entry.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(b, "level=%d msg=%q", entry.Level, entry.Message)
	for _, k := range keys {
		fmt.Fprintf(b, " %s=%v", k, entry.Data[k])
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// filenameFormatter mirrors github.com/onrik/logrus/filename's formatter wrapper, which
// decorates every entry with the caller's file:line before delegating to the real formatter.
type filenameFormatter struct {
	formatter Formatter
	field     string
	skip      int
}

func (w *filenameFormatter) Format(entry *Entry) ([]byte, error) {
	_, file, line, _ := runtime.Caller(w.skip)
	return w.formatter.Format(entry.WithField(w.field, fmt.Sprintf("%s:%d", filepath.Base(file), line)))
}

func TestB115logruswithfields(t *testing.T) {
	var out bytes.Buffer
	log := &Logger{Out: &out, Level: InfoLevel,
		Formatter: &filenameFormatter{formatter: &TextFormatter{}, field: "source", skip: 5}}

	log.Info("finish init logger")

	if out.Len() == 0 {
		t.Fatal("nothing logged")
	}
}
