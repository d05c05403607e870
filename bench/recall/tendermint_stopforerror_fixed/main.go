package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

type BaseService struct {
	name    string
	started atomic.Bool
	stopped atomic.Bool
}

func (bs *BaseService) Start() { bs.started.Store(true) }

func (bs *BaseService) Stop() bool {
	if bs.stopped.CompareAndSwap(false, true) {
		fmt.Printf("stopping %s\n", bs.name)
		return true
	}
	return false
}

func (bs *BaseService) IsRunning() bool { return bs.started.Load() && !bs.stopped.Load() }

type socketClient struct {
	BaseService
	addr string

	mtx     sync.Mutex
	err     error
	reqSent []string
}

func NewSocketClient(addr string) *socketClient {
	cli := &socketClient{addr: addr}
	cli.BaseService = BaseService{name: "socketClient"}
	return cli
}

func (cli *socketClient) StopForError(err error) {
	if !cli.IsRunning() {
		return
	}

	cli.mtx.Lock()
	if cli.err == nil {
		cli.err = err
	}
	cli.mtx.Unlock()

	fmt.Printf("stopping abci.socketClient for error: %v\n", err)
	cli.Stop()
}

func (cli *socketClient) Error() error {
	cli.mtx.Lock()
	defer cli.mtx.Unlock()
	return cli.err
}

func (cli *socketClient) sendRequestsRoutine(done chan<- struct{}) {
	defer close(done)
	cli.StopForError(errors.New("write tcp: broken pipe"))
}

func (cli *socketClient) recvResponseRoutine(done chan<- struct{}) {
	defer close(done)
	cli.StopForError(errors.New("read tcp: connection reset by peer"))
}

func main() {
	cli := NewSocketClient("tcp://127.0.0.1:26658")
	cli.Start()

	sendDone := make(chan struct{})
	go cli.sendRequestsRoutine(sendDone)
	<-sendDone

	recvDone := make(chan struct{})
	go cli.recvResponseRoutine(recvDone)
	<-recvDone

	fmt.Println("client error:", cli.Error())
}
