// Project: smallnest/rpcx (client/client.go)
// Bug: Client.send registers the call in client.pending under client.mutex
//      and encodes the request args while still holding it. The branch that
//      handles an encode failure removes the pending entry and completes the
//      call, but returns without unlocking client.mutex, so the next Go/Call
//      (and Close) on that client blocks forever.
// Fix: unlock client.mutex on the encode-error path (encode before touching
//      the shared state).

package b22rpcxsend_fixed

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
)

var (
	ErrShutdown         = errors.New("connection is shut down")
	ErrUnsupportedCodec = errors.New("unsupported codec")
)

type SerializeType byte

const (
	JSON SerializeType = iota + 1
	ProtoBuffer
)

type Codec interface {
	Encode(i interface{}) ([]byte, error)
	Decode(data []byte, i interface{}) error
}

type JSONCodec struct{}

func (JSONCodec) Encode(i interface{}) ([]byte, error)    { return json.Marshal(i) }
func (JSONCodec) Decode(data []byte, i interface{}) error { return json.Unmarshal(data, i) }

var Codecs = map[SerializeType]Codec{JSON: JSONCodec{}}

type Option struct {
	SerializeType SerializeType
	Retries       int
}

type Call struct {
	ServicePath   string
	ServiceMethod string
	Args          interface{}
	Reply         interface{}
	Error         error
	Done          chan *Call
	Raw           bool
}

func (call *Call) done() {
	select {
	case call.Done <- call:
	default:
	}
}

type Client struct {
	option   Option
	mutex    sync.Mutex
	seq      uint64
	pending  map[uint64]*Call
	closing  bool
	shutdown bool
	written  [][]byte
	Plugins  []func(servicePath, method string)
}

func NewClient(option Option) *Client {
	return &Client{option: option, pending: make(map[uint64]*Call)}
}

func (client *Client) IsClosing() bool {
	client.mutex.Lock()
	defer client.mutex.Unlock()
	return client.closing
}

func (client *Client) Go(ctx context.Context, servicePath, serviceMethod string, args, reply interface{}, done chan *Call) *Call {
	call := &Call{ServicePath: servicePath, ServiceMethod: serviceMethod, Args: args, Reply: reply}
	if done == nil {
		done = make(chan *Call, 10)
	}
	call.Done = done
	client.send(ctx, call)
	return call
}

func (client *Client) Call(ctx context.Context, servicePath, serviceMethod string, args, reply interface{}) error {
	call := <-client.Go(ctx, servicePath, serviceMethod, args, reply, make(chan *Call, 1)).Done
	return call.Error
}

func (client *Client) send(ctx context.Context, call *Call) {
	client.mutex.Lock()
	if client.shutdown || client.closing {
		call.Error = ErrShutdown
		client.mutex.Unlock()
		call.done()
		return
	}
	codec := Codecs[client.option.SerializeType]
	if codec == nil {
		call.Error = ErrUnsupportedCodec
		client.mutex.Unlock()
		call.done()
		return
	}
	seq := client.seq
	client.seq++
	client.pending[seq] = call

	data, err := codec.Encode(call.Args)
	if err != nil {
		delete(client.pending, seq)
		client.mutex.Unlock()
		call.Error = err
		call.done()
		return
	}
	client.written = append(client.written, data)
	client.mutex.Unlock()

	for _, p := range client.Plugins {
		p(call.ServicePath, call.ServiceMethod)
	}
	client.mutex.Lock()
	delete(client.pending, seq)
	client.mutex.Unlock()
	call.done()
}

func (client *Client) Close() error {
	client.mutex.Lock()
	defer client.mutex.Unlock()
	for seq, call := range client.pending {
		delete(client.pending, seq)
		call.Error = ErrShutdown
		call.done()
	}
	if client.closing || client.shutdown {
		return ErrShutdown
	}
	client.closing = true
	return nil
}

type Args struct {
	A, B int
	Meta interface{} `json:"meta,omitempty"`
}

func TestProbe(t *testing.T) {
	client := NewClient(Option{SerializeType: JSON, Retries: 3})
	client.Plugins = append(client.Plugins, func(path, method string) { t.Logf("call %s.%s", path, method) })
	ctx := context.Background()

	var reply int
	err := client.Call(ctx, "Arith", "Mul", &Args{A: 10, B: 20, Meta: make(chan int)}, &reply)
	if err == nil {
		t.Fatal("expected encode error for func field")
	}
	if err := client.Call(ctx, "Arith", "Mul", &Args{A: 10, B: 20}, &reply); err != nil {
		t.Fatalf("second call: %v", err)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
}
