// Project: sirupsen/logrus
// Bug: Entry.fireHooks held Logger.mu (the logger's MutexWrap) while calling
//      Logger.Hooks.Fire, i.e. every registered Hook's Fire method through the Hook
//      interface. A hook that itself logs through the same logger re-enters
//      Entry.log -> fireHooks -> Logger.mu.Lock() and deadlocks on itself.
// Fix: fireHooks copies Logger.Hooks under the mutex, releases it, and fires the
//      copied hooks without holding Logger.mu.

package logrushook

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
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

func (level Level) String() string {
	if names := []string{"panic", "fatal", "error", "warning", "info", "debug"}; int(level) < len(names) {
		return names[level]
	}
	return "unknown"
}

type Fields map[string]interface{}

type Hook interface {
	Levels() []Level
	Fire(*Entry) error
}

type LevelHooks map[Level][]Hook

func (hooks LevelHooks) Add(hook Hook) {
	for _, level := range hook.Levels() {
		hooks[level] = append(hooks[level], hook)
	}
}

func (hooks LevelHooks) Fire(level Level, entry *Entry) error {
	for _, hook := range hooks[level] {
		if err := hook.Fire(entry); err != nil {
			return err
		}
	}
	return nil
}

type Formatter interface {
	Format(*Entry) ([]byte, error)
}

type TextFormatter struct{}

func (f *TextFormatter) Format(entry *Entry) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "time=%q level=%s msg=%q", entry.Time.Format(time.RFC3339), entry.Level, entry.Message)
	for k, v := range entry.Data {
		fmt.Fprintf(&b, " %s=%v", k, v)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

type Logger struct {
	Out       io.Writer
	Hooks     LevelHooks
	Formatter Formatter
	Level     Level
	mu        sync.Mutex // MutexWrap upstream
}

func New() *Logger {
	return &Logger{Out: os.Stderr, Formatter: new(TextFormatter), Hooks: make(LevelHooks), Level: InfoLevel}
}

func (logger *Logger) AddHook(hook Hook) {
	logger.mu.Lock()
	defer logger.mu.Unlock()
	logger.Hooks.Add(hook)
}

func (logger *Logger) WithField(key string, value interface{}) *Entry {
	return NewEntry(logger).WithFields(Fields{key: value})
}

func (logger *Logger) Error(args ...interface{}) { NewEntry(logger).Log(ErrorLevel, args...) }

type Entry struct {
	Logger  *Logger
	Data    Fields
	Time    time.Time
	Level   Level
	Message string
}

func NewEntry(logger *Logger) *Entry { return &Entry{Logger: logger, Data: make(Fields, 6)} }

func (entry *Entry) WithFields(fields Fields) *Entry {
	data := make(Fields, len(entry.Data)+len(fields))
	for k, v := range entry.Data {
		data[k] = v
	}
	for k, v := range fields {
		data[k] = v
	}
	return &Entry{Logger: entry.Logger, Data: data, Time: entry.Time}
}

func (entry *Entry) Log(level Level, args ...interface{}) {
	if Level(atomic.LoadUint32((*uint32)(&entry.Logger.Level))) >= level {
		entry.log(level, fmt.Sprint(args...))
	}
}

func (entry *Entry) Warn(args ...interface{}) { entry.Log(WarnLevel, args...) }

func (entry *Entry) log(level Level, msg string) {
	newEntry := entry.WithFields(nil)
	newEntry.Time = time.Now()
	newEntry.Level = level
	newEntry.Message = msg
	newEntry.fireHooks()
	newEntry.write()
}

func (entry *Entry) fireHooks() {
	entry.Logger.mu.Lock()
	defer entry.Logger.mu.Unlock()
	if err := entry.Logger.Hooks.Fire(entry.Level, entry); err != nil {
		fmt.Fprintf(os.Stderr, "Failed to fire hook: %v\n", err)
	}
}

func (entry *Entry) write() {
	entry.Logger.mu.Lock()
	defer entry.Logger.mu.Unlock()
	serialized, err := entry.Logger.Formatter.Format(entry)
	if err == nil {
		_, err = entry.Logger.Out.Write(serialized)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "Failed to write to log, %v\n", err)
	}
}

// errorBudgetHook warns (through the same logger) once too many errors were seen.
type errorBudgetHook struct {
	logger *Logger
	budget int32
	seen   int32
}

func (h *errorBudgetHook) Levels() []Level { return []Level{ErrorLevel} }

func (h *errorBudgetHook) Fire(e *Entry) error {
	if atomic.AddInt32(&h.seen, 1) > h.budget {
		h.logger.WithField("hook", "error-budget").Warn("error budget exhausted after: ", e.Message)
	}
	return nil
}

func TestHookLogsThroughSameLogger(t *testing.T) {
	var out bytes.Buffer
	logger := New()
	logger.Out = &out
	logger.AddHook(&errorBudgetHook{logger: logger, budget: 1})

	done := make(chan struct{})
	go func() {
		defer close(done)
		logger.Error("upstream connect failed")
		logger.Error("upstream connect failed again")
	}()
	<-done
	if !bytes.Contains(out.Bytes(), []byte("error budget exhausted")) {
		t.Fatalf("missing hook output:\n%s", out.String())
	}
}
