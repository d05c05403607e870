// Project: etcd-io/etcd (clientv3/remote_client.go, clientv3/client.go, clientv3/kv.go), v3.0 development, June 2016 (PR #5509, approximate).
// Bug: remoteClient.acquire read-locks client.mu and, when it sees that the client was closed, returns ErrConnClosed without releasing that read lock (callers only call release on success), so the next Client.Close (or reconnect) blocks forever in client.mu.Lock.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ---- etcdserver/api/v3rpc/rpctypes ----

var ErrConnClosed = errors.New("clientv3: connection closed")

// ---- grpc stand-in ----

type ClientConn struct {
	target string
	closed bool
}

func (cc *ClientConn) Close() error { cc.closed = true; return nil }

type RangeRequest struct{ Key []byte }
type RangeResponse struct{ Count int64 }

type KVClient interface {
	Range(ctx context.Context, in *RangeRequest) (*RangeResponse, error)
}

type kvClient struct{ cc *ClientConn }

func (c *kvClient) Range(ctx context.Context, in *RangeRequest) (*RangeResponse, error) {
	return &RangeResponse{Count: 1}, nil
}

// ---- clientv3/client.go ----

type Client struct {
	KV

	conn *ClientConn
	// mu protects conn, cancel and newconnc
	mu       sync.RWMutex
	newconnc chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
}

func New(endpoint string) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{conn: &ClientConn{target: endpoint}, newconnc: make(chan struct{}), ctx: ctx, cancel: cancel}
	c.KV = NewKV(c)
	return c
}

// Close shuts down the client's etcd connections.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.cancel == nil {
		c.mu.Unlock()
		return nil
	}
	c.cancel()
	c.cancel = nil
	c.mu.Unlock()
	return c.conn.Close()
}

// retryConnection establishes a new connection
func (c *Client) retryConnection(oldConn *ClientConn, err error) (*ClientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel == nil {
		return nil, c.ctx.Err()
	}
	c.conn = &ClientConn{target: oldConn.target}
	close(c.newconnc)
	c.newconnc = make(chan struct{})
	return c.conn, nil
}

// ---- clientv3/remote_client.go ----

type remoteClient struct {
	client     *Client
	conn       *ClientConn
	updateConn func(*ClientConn)
	mu         sync.Mutex
}

func newRemoteClient(client *Client, update func(*ClientConn)) *remoteClient {
	client.mu.RLock()
	defer client.mu.RUnlock()
	ret := &remoteClient{client: client, conn: client.conn, updateConn: update}
	ret.mu.Lock()
	defer ret.mu.Unlock()
	ret.updateConn(client.conn)
	return ret
}

// acquire gets the client read lock on an established connection or
// returns an error without holding the lock.
func (r *remoteClient) acquire(ctx context.Context) error {
	for {
		r.client.mu.RLock()
		closed := r.client.cancel == nil
		c := r.client.conn
		r.mu.Lock()
		match := r.conn == c
		r.mu.Unlock()
		if closed {
			r.client.mu.RUnlock()
			return ErrConnClosed
		}
		if match {
			return nil
		}
		r.client.mu.RUnlock()
		if _, err := r.client.retryConnection(c, ctx.Err()); err != nil {
			return err
		}
	}
}

func (r *remoteClient) release() { r.client.mu.RUnlock() }

// ---- clientv3/kv.go ----

type KV interface {
	Get(ctx context.Context, key string) (*RangeResponse, error)
}

type kv struct {
	rc     *remoteClient
	remote KVClient
}

func NewKV(c *Client) KV {
	ret := &kv{}
	f := func(conn *ClientConn) { ret.remote = &kvClient{cc: conn} }
	ret.rc = newRemoteClient(c, f)
	return ret
}

func (kv *kv) Get(ctx context.Context, key string) (*RangeResponse, error) {
	return kv.Do(ctx, &RangeRequest{Key: []byte(key)})
}

func (kv *kv) Do(ctx context.Context, r *RangeRequest) (*RangeResponse, error) {
	for {
		resp, err := kv.do(ctx, r)
		if err == nil {
			return resp, nil
		}
		return nil, err
	}
}

func (kv *kv) do(ctx context.Context, r *RangeRequest) (*RangeResponse, error) {
	remote, err := kv.getRemote(ctx)
	if err != nil {
		return nil, err
	}
	defer kv.rc.release()
	return remote.Range(ctx, r)
}

func (kv *kv) getRemote(ctx context.Context) (KVClient, error) {
	if err := kv.rc.acquire(ctx); err != nil {
		return nil, err
	}
	return kv.remote, nil
}

func main() {
	cli := New("localhost:2379")
	defer cli.Close()

	resp, err := cli.Get(context.Background(), "foo")
	fmt.Println("get before close:", resp, err)

	cli.Close()
	_, err = cli.Get(context.Background(), "foo")
	fmt.Println("get after close:", err)
	// The deferred cli.Close() now takes cli.mu.Lock.
}
