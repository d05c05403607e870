// Project: tendermint (abci/client/socket_client.go, libs/service/service.go)
// Bug: trackRequest (request goroutine) holds cli.mtx and calls
// cli.IsRunning(), which takes BaseService.mtx. Concurrently BaseService.Stop
// holds BaseService.mtx and calls the Implementation's OnStop, whose socket
// client implementation drains the queue under cli.mtx: AB-BA through an interface call.
// Upstream fix: check IsRunning before taking cli.mtx in trackRequest (tendermint/tendermint#8581).
package main

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

type Implementation interface {
	OnStart(context.Context) error
	OnStop()
}

type BaseService struct {
	mtx    sync.Mutex
	name   string
	cancel context.CancelFunc
	impl   Implementation
}

func NewBaseService(name string, impl Implementation) *BaseService {
	return &BaseService{name: name, impl: impl}
}

func (bs *BaseService) Start(ctx context.Context) error {
	bs.mtx.Lock()
	defer bs.mtx.Unlock()
	ctx, bs.cancel = context.WithCancel(ctx)
	return bs.impl.OnStart(ctx)
}

func (bs *BaseService) Stop() {
	bs.mtx.Lock()
	defer bs.mtx.Unlock()
	if bs.cancel == nil {
		return
	}
	fmt.Println("stopping service", bs.name)
	bs.impl.OnStop()
	bs.cancel()
	bs.cancel = nil
}

func (bs *BaseService) IsRunning() bool {
	bs.mtx.Lock() // DEADLOCK HERE
	defer bs.mtx.Unlock()
	return bs.cancel != nil
}

type requestAndResponse struct {
	method string
	done   chan struct{}
}

type socketClient struct {
	*BaseService
	mtx     sync.Mutex
	reqSent *list.List
}

func NewSocketClient() *socketClient {
	cli := &socketClient{reqSent: list.New()}
	cli.BaseService = NewBaseService("socketClient", cli)
	return cli
}

func (cli *socketClient) OnStart(ctx context.Context) error { return nil }

func (cli *socketClient) OnStop() {
	time.Sleep(10 * time.Millisecond) // close conn
	cli.drainQueue()
}

func (cli *socketClient) drainQueue() {
	cli.mtx.Lock()
	defer cli.mtx.Unlock()
	for req := cli.reqSent.Front(); req != nil; req = req.Next() {
		close(req.Value.(*requestAndResponse).done)
	}
	cli.reqSent.Init()
}

func (cli *socketClient) trackRequest(reqres *requestAndResponse) {
	cli.mtx.Lock()
	defer cli.mtx.Unlock()
	time.Sleep(20 * time.Millisecond)
	if !cli.IsRunning() {
		return
	}
	cli.reqSent.PushBack(reqres)
}

func main() {
	cli := NewSocketClient()
	if err := cli.Start(context.Background()); err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		cli.trackRequest(&requestAndResponse{method: "CheckTx", done: make(chan struct{})})
	}()
	go func() {
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		cli.Stop()
	}()
	wg.Wait()
	fmt.Println("client stopped, pending:", cli.reqSent.Len())
}
