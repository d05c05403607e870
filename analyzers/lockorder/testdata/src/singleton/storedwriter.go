package main

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// A server logging under its lock to the writer in an unexported
// io.Writer field, which only ever holds its own sink; the sink counts
// the bytes under the server's lock. io.Writer is no interface of the
// package, but the field's stores say which Write runs, and the program
// makes one server.

type logServer struct {
	mu    sync.Mutex
	out   io.Writer
	bytes int
}

type countingSink struct{ srv *logServer }

func (k *countingSink) Write(p []byte) (int, error) {
	k.srv.mu.Lock()
	defer k.srv.mu.Unlock()
	k.srv.bytes += len(p)
	return len(p), nil
}

func (s *logServer) logf(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Write([]byte(msg)) // want `logServer.mu locked again by countingSink.Write \(at storedwriter.go:\d+\), the same lock: the program makes one logServer \(at storedwriter.go:\d+\), while held since storedwriter.go:\d+: self-deadlock \[double-lock\]`
}

// A writer field that also holds another package's writer: which Write
// runs is not known. Silent.
type relay struct {
	mu  sync.Mutex
	dst io.Writer
}

func (r *relay) send(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dst.Write([]byte(msg))
}

func runLogServer() {
	s := &logServer{}
	s.out = &countingSink{srv: s}
	s.logf("started")
	r := &relay{dst: os.Stdout}
	r.send("x")
	fmt.Println(s.bytes)
}
