// Project: apache/thrift Go library (lib/go/thrift/simple_server.go: TSimpleServer.AcceptLoop, Serve, Stop), 0.11.0, December 2017.
// Bug: THRIFT-4243 (PR #1302) made AcceptLoop take p.mu after every Accept, but the loop returns while still holding p.mu when the server is closed or Accept fails, so once the accept goroutine has exited, the next TSimpleServer.Stop blocks forever on p.mu (THRIFT-4537, PR #1523 "Fix condition where TSimpleServer could exit AcceptLoop() without releasing lock").
// Fix: the loop body moves into innerAccept, which releases p.mu with defer on every return path (PR #1523, released in 0.12.0).
package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"sync/atomic"
)

// Transport and processor interfaces, reduced.
type TTransport interface {
	io.ReadWriteCloser
}

type TServerTransport interface {
	Listen() error
	Accept() (TTransport, error)
	Close() error
	// Optional method implementation. This signals to the server transport
	// that it should break out of any accept() or listen() that it is currently blocked on.
	Interrupt() error
}

type TProcessor interface {
	Process(in, out TTransport) (bool, error)
}

type TProcessorFactory interface {
	GetProcessor(trans TTransport) TProcessor
}

type tProcessorFactory struct{ processor TProcessor }

func (p *tProcessorFactory) GetProcessor(trans TTransport) TProcessor { return p.processor }

func NewTProcessorFactory(p TProcessor) TProcessorFactory { return &tProcessorFactory{processor: p} }

/*
 * This is not a typical TSimpleServer as it is not blocked after accept a socket.
 * It is more like a TThreadedServer that can handle different connections in different goroutines.
 * This will work if golang user implements a conn-pool like thing in client side.
 */
type TSimpleServer struct {
	closed int32
	wg     sync.WaitGroup
	mu     sync.Mutex

	processorFactory TProcessorFactory
	serverTransport  TServerTransport
}

func NewTSimpleServer2(processor TProcessor, serverTransport TServerTransport) *TSimpleServer {
	return &TSimpleServer{processorFactory: NewTProcessorFactory(processor), serverTransport: serverTransport}
}

func (p *TSimpleServer) Listen() error {
	return p.serverTransport.Listen()
}

func (p *TSimpleServer) innerAccept() (int32, error) {
	client, err := p.serverTransport.Accept()
	p.mu.Lock()
	defer p.mu.Unlock()
	closed := atomic.LoadInt32(&p.closed)
	if closed != 0 {
		return closed, nil
	}
	if err != nil {
		return 0, err
	}
	if client != nil {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := p.processRequests(client); err != nil {
				log.Println("error processing request:", err)
			}
		}()
	}
	return 0, nil
}

func (p *TSimpleServer) AcceptLoop() error {
	for {
		closed, err := p.innerAccept()
		if err != nil {
			return err
		}
		if closed != 0 {
			return nil
		}
	}
}

func (p *TSimpleServer) Serve() error {
	err := p.Listen()
	if err != nil {
		return err
	}
	p.AcceptLoop()
	return nil
}

func (p *TSimpleServer) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if atomic.LoadInt32(&p.closed) != 0 {
		return nil
	}
	atomic.StoreInt32(&p.closed, 1)
	p.serverTransport.Interrupt()
	p.wg.Wait()
	return nil
}

func (p *TSimpleServer) processRequests(client TTransport) error {
	processor := p.processorFactory.GetProcessor(client)
	defer client.Close()
	for {
		ok, err := processor.Process(client, client)
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if !ok {
			return nil
		}
	}
}

// A server socket whose second Accept fails (e.g. "too many open files").
type memSocket struct{ n int }

func (s *memSocket) Read(b []byte) (int, error)  { return 0, io.EOF }
func (s *memSocket) Write(b []byte) (int, error) { return len(b), nil }
func (s *memSocket) Close() error                { return nil }

type flakyServerSocket struct {
	mu       sync.Mutex
	accepted int
}

func (t *flakyServerSocket) Listen() error    { return nil }
func (t *flakyServerSocket) Close() error     { return nil }
func (t *flakyServerSocket) Interrupt() error { return nil }
func (t *flakyServerSocket) Accept() (TTransport, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.accepted++
	if t.accepted > 1 {
		return nil, errors.New("accept tcp [::]:9090: accept4: too many open files")
	}
	return &memSocket{n: t.accepted}, nil
}

type echoProcessor struct{}

func (echoProcessor) Process(in, out TTransport) (bool, error) {
	buf := make([]byte, 64)
	_, err := in.Read(buf)
	return err == nil, err
}

func main() {
	server := NewTSimpleServer2(echoProcessor{}, &flakyServerSocket{})
	errc := make(chan error, 1)
	go func() { errc <- server.Serve() }()

	fmt.Println("server exited:", <-errc)
	// The service shuts down its thrift server on the way out.
	if err := server.Stop(); err != nil {
		fmt.Println("stop:", err)
	}
	fmt.Println("server stopped")
}
