// Project: hashicorp/consul (command/agent/log_writer.go, command/agent/rpc_log_stream.go, command/agent/rpc.go, command/agent/command.go), v0.3/v0.4, 2014 (approximate).
// Bug: LogWriter.Write holds the writer's mutex while it hands each line to every registered LogHandler, and the monitor stream's logStream.HandleLog, once its 512-entry channel was full because a "consul monitor" client read slowly, logged a "Dropping logs" warning synchronously through the RPC logger, whose output is the same LogWriter, so Write re-entered and blocked on its own mutex and every goroutine that logged hung behind it. The fix logs the warning from a new goroutine ("We must therefore do the log async, so as to not deadlock").
package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
)

// ---- hashicorp/logutils (LevelFilter) ----

type LevelFilter struct {
	Levels   []string
	MinLevel string
	Writer   io.Writer
}

func (f *LevelFilter) Check(line []byte) bool {
	level := ""
	if x := bytes.IndexByte(line, '['); x >= 0 {
		if y := bytes.IndexByte(line[x:], ']'); y >= 0 {
			level = string(line[x+1 : x+y])
		}
	}
	for _, l := range f.Levels {
		if l == f.MinLevel {
			return true
		}
		if l == level {
			return false
		}
	}
	return true
}

func (f *LevelFilter) Write(p []byte) (int, error) {
	if !f.Check(p) {
		return len(p), nil
	}
	return f.Writer.Write(p)
}

// ---- command/agent/log_writer.go ----

// LogHandler interface is used for clients that want to subscribe to logs.
type LogHandler interface {
	HandleLog(string)
}

// LogWriter implements io.Writer so it can be used as a log sink. It maintains
// a circular buffer of logs, and a set of handlers to which it can stream the logs to.
type LogWriter struct {
	sync.Mutex
	logs     []string
	index    int
	handlers map[LogHandler]struct{}
}

func NewLogWriter(buf int) *LogWriter {
	return &LogWriter{logs: make([]string, buf), handlers: make(map[LogHandler]struct{})}
}

// RegisterHandler adds a log handler to receive logs.
func (l *LogWriter) RegisterHandler(lh LogHandler) {
	l.Lock()
	defer l.Unlock()
	l.handlers[lh] = struct{}{}
}

// Write is used to accumulate new logs.
func (l *LogWriter) Write(p []byte) (n int, err error) {
	l.Lock()
	defer l.Unlock()
	n = len(p)
	line := strings.TrimSuffix(string(p), "\n")
	l.logs[l.index] = line
	l.index = (l.index + 1) % len(l.logs)
	for lh := range l.handlers {
		lh.HandleLog(line)
	}
	return
}

// ---- command/agent/rpc.go, rpc_log_stream.go ----

// rpcClient is a connected "consul monitor" client; conn stands in for its socket.
type rpcClient struct {
	name string
	conn chan string
}

func (c *rpcClient) String() string { return c.name }

func (c *rpcClient) Send(seq uint64, line string) error {
	c.conn <- line
	return nil
}

// logStream is used to stream logs to a client over IPC.
type logStream struct {
	client *rpcClient
	filter *LevelFilter
	logCh  chan string
	logger *log.Logger
	seq    uint64
}

func newLogStream(client *rpcClient, filter *LevelFilter, seq uint64, logger *log.Logger) *logStream {
	ls := &logStream{client: client, filter: filter, logCh: make(chan string, 512), logger: logger, seq: seq}
	go ls.stream()
	return ls
}

func (ls *logStream) HandleLog(l string) {
	// Check the log level
	if !ls.filter.Check([]byte(l)) {
		return
	}
	// Do a non-blocking send
	select {
	case ls.logCh <- l:
	default:
		ls.logger.Printf("[WARN] agent.rpc: Dropping logs to %v", ls.client)
	}
}

func (ls *logStream) stream() {
	for line := range ls.logCh {
		if err := ls.client.Send(ls.seq, line); err != nil {
			ls.logger.Printf("[ERR] agent.rpc: Failed to stream log to %v: %v", ls.client, err)
			return
		}
	}
}

type AgentRPC struct {
	sync.Mutex
	logger    *log.Logger
	logWriter *LogWriter
}

func NewAgentRPC(logOutput io.Writer, logWriter *LogWriter) *AgentRPC {
	return &AgentRPC{logger: log.New(logOutput, "", log.LstdFlags), logWriter: logWriter}
}

func (i *AgentRPC) handleMonitor(client *rpcClient, seq uint64, logLevel string) {
	filter := &LevelFilter{Levels: []string{"TRACE", "DEBUG", "INFO", "WARN", "ERR"}, MinLevel: logLevel, Writer: io.Discard}
	ls := newLogStream(client, filter, seq, i.logger)
	i.logWriter.RegisterHandler(ls)
}

// ---- command/agent ----

type Agent struct{ logger *log.Logger }

func (a *Agent) syncService(id string) { a.logger.Printf("[INFO] agent: Synced service '%s'", id) }

func main() {
	// command.go setupLoggers: the gated stderr writer behind a level filter, plus the LogWriter.
	logGate := io.Discard
	logFilter := &LevelFilter{Levels: []string{"TRACE", "DEBUG", "INFO", "WARN", "ERR"}, MinLevel: "INFO", Writer: logGate}
	logWriter := NewLogWriter(512)
	logOutput := io.MultiWriter(logFilter, logWriter)

	agent := &Agent{logger: log.New(logOutput, "", log.LstdFlags)}
	rpc := NewAgentRPC(logOutput, logWriter)

	// "consul monitor" attaches and then stops reading from its socket.
	client := &rpcClient{name: "127.0.0.1:52144", conn: make(chan string)}
	rpc.handleMonitor(client, 1, "INFO")

	synced := 0
	for i := 0; i < 600; i++ {
		agent.syncService(fmt.Sprintf("web-%d", i))
		synced++
	}
	fmt.Println("agent synced", synced, "services")
}
