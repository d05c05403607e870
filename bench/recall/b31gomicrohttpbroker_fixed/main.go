// Project: micro/go-micro (broker/http_broker.go, client/rpc_client.go,
// server/rpc_server.go, publisher.go), 2018
// Issue: micro/go-micro #267 "Deadlock issue, when HTTPBrocker Connect is
// called."; fixed by PR #268 "Fixing httpBroker dead lock; If publish is called
// from a subscription #267".
//
// Bug: the http broker delivers a publication in httpBroker.ServeHTTP, which
// read-locks the broker (line 213, the broker embeds sync.RWMutex) and,
// still holding it, calls each matching subscriber's fn, the Handler func the
// server stored when it subscribed. A worker service's subscriber handler
// publishes a follow-up event: Publisher.Publish -> rpcClient.Publish, which
// on the client's first publication connects the broker through
// r.once.Do(func() { r.opts.Broker.Connect() }). Broker is an interface; here
// it is the same httpBroker, and httpBroker.Connect write-locks it (line
// 227) before even looking at h.running. The goroutine waits for its own
// read lock: the worker's broker never serves again.
// The fix makes Connect (and Disconnect/Init) check h.running under the read
// lock first and return early when the broker is already connected.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync"
)

// --- net/http, trimmed (importing net/http keeps the runtime from reporting
// the deadlock, so the two types the broker uses are reduced here) ---------

type ResponseWriter interface {
	Write([]byte) (int, error)
	WriteHeader(statusCode int)
}

type Request struct {
	Method string
	URL    *url.URL
	Form   url.Values
	Body   io.ReadCloser
}

func (r *Request) ParseForm() error {
	r.Form = r.URL.Query()
	return nil
}

const StatusMethodNotAllowed = 405

func Error(w ResponseWriter, error string, code int) {
	w.WriteHeader(code)
	fmt.Fprintln(w, error)
}

type responseRecorder struct {
	Code int
	Body bytes.Buffer
}

func (rw *responseRecorder) Write(b []byte) (int, error) { return rw.Body.Write(b) }
func (rw *responseRecorder) WriteHeader(code int)        { rw.Code = code }

// --- registry -----------------------------------------------------------------

type Node struct {
	Id      string
	Address string
}

type Service struct {
	Name  string
	Nodes []*Node
}

type Registry interface {
	Register(s *Service) error
	GetService(name string) ([]*Service, error)
}

type memoryRegistry struct {
	services map[string][]*Service
}

func (m *memoryRegistry) Register(s *Service) error {
	m.services[s.Name] = append(m.services[s.Name], s)
	return nil
}

func (m *memoryRegistry) GetService(name string) ([]*Service, error) {
	s, ok := m.services[name]
	if !ok {
		return nil, errors.New("service not found")
	}
	return s, nil
}

// --- broker -------------------------------------------------------------------

type Message struct {
	Header map[string]string
	Body   []byte
}

// Publication is given to a subscription handler for processing
type Publication interface {
	Topic() string
	Message() *Message
	Ack() error
}

// Handler is used to process messages via a subscription of a topic.
type Handler func(Publication) error

type Subscriber interface {
	Topic() string
	Unsubscribe() error
}

// Broker is an interface used for asynchronous messaging.
type Broker interface {
	Address() string
	Connect() error
	Disconnect() error
	Publish(string, *Message) error
	Subscribe(string, Handler) (Subscriber, error)
	String() string
}

type httpBroker struct {
	id      string
	address string

	r Registry

	sync.RWMutex
	subscribers map[string][]*httpSubscriber
	running     bool
	exit        chan chan error
	outbox      []string
}

var subIDs int

type httpSubscriber struct {
	id    string
	topic string
	fn    Handler
	svc   *Service
	hb    *httpBroker
}

type httpPublication struct {
	m *Message
	t string
}

func (h *httpPublication) Ack() error        { return nil }
func (h *httpPublication) Message() *Message { return h.m }
func (h *httpPublication) Topic() string     { return h.t }

func (h *httpSubscriber) Topic() string      { return h.topic }
func (h *httpSubscriber) Unsubscribe() error { return nil }

func newHttpBroker(r Registry) *httpBroker {
	return &httpBroker{
		id:          "go.micro.http.broker-1",
		address:     "127.0.0.1:40001",
		r:           r,
		subscribers: make(map[string][]*httpSubscriber),
		exit:        make(chan chan error),
	}
}

func (h *httpBroker) ServeHTTP(w ResponseWriter, req *Request) {
	if req.Method != "POST" {
		Error(w, "Method not allowed", StatusMethodNotAllowed)
		return
	}
	defer req.Body.Close()

	req.ParseForm()

	b, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(500)
		w.Write([]byte("Error reading request body: " + err.Error()))
		return
	}

	var m *Message
	if err = json.Unmarshal(b, &m); err != nil {
		w.WriteHeader(500)
		w.Write([]byte("Error parsing request body: " + err.Error()))
		return
	}

	topic := m.Header[":topic"]
	delete(m.Header, ":topic")

	if len(topic) == 0 {
		w.WriteHeader(500)
		w.Write([]byte("Topic not found"))
		return
	}

	p := &httpPublication{m: m, t: topic}
	id := req.Form.Get("id")

	h.RLock()
	for _, subscriber := range h.subscribers[topic] {
		if id == subscriber.id {
			// sub is sync; crufty rate limiting
			// so we don't hose the cpu
			subscriber.fn(p)
		}
	}
	h.RUnlock()
}

func (h *httpBroker) Address() string { return h.address }

func (h *httpBroker) Connect() error {
	h.RLock()
	if h.running {
		h.RUnlock()
		return nil
	}
	h.RUnlock()

	h.Lock()
	defer h.Unlock()

	// listen on h.address, register the broker and start the run loop
	h.running = true
	return nil
}

func (h *httpBroker) Disconnect() error {
	h.RLock()
	if !h.running {
		h.RUnlock()
		return nil
	}
	h.RUnlock()

	h.Lock()
	defer h.Unlock()
	h.running = false
	return nil
}

func (h *httpBroker) Publish(topic string, msg *Message) error {
	h.RLock()
	s, err := h.r.GetService("topic:" + topic)
	if err != nil {
		h.RUnlock()
		return err
	}
	h.RUnlock()

	m := &Message{Header: make(map[string]string), Body: msg.Body}
	for k, v := range msg.Header {
		m.Header[k] = v
	}
	m.Header[":topic"] = topic
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}

	// POST the message to every node of the topic's service (asynchronously,
	// through h.c, in the real broker).
	for _, service := range s {
		for _, node := range service.Nodes {
			h.outbox = append(h.outbox, fmt.Sprintf("POST http://%s/_sub?id=%s %s", node.Address, node.Id, b))
		}
	}
	return nil
}

func (h *httpBroker) Subscribe(topic string, handler Handler) (Subscriber, error) {
	subIDs++ // a uuid in go-micro
	id := fmt.Sprintf("%s-%d", topic, subIDs)
	service := &Service{
		Name:  "topic:" + topic,
		Nodes: []*Node{{Id: id, Address: h.address}},
	}

	subscriber := &httpSubscriber{
		hb:    h,
		id:    id,
		topic: topic,
		fn:    handler,
		svc:   service,
	}

	// subscribe now
	if err := h.subscribe(subscriber); err != nil {
		return nil, err
	}
	return subscriber, nil
}

func (h *httpBroker) subscribe(s *httpSubscriber) error {
	h.Lock()
	defer h.Unlock()

	if err := h.r.Register(s.svc); err != nil {
		return err
	}

	h.subscribers[s.topic] = append(h.subscribers[s.topic], s)
	return nil
}

func (h *httpBroker) String() string { return "http" }

// --- client -------------------------------------------------------------------

type clientMessage struct {
	topic       string
	contentType string
	payload     interface{}
}

func (m *clientMessage) Topic() string        { return m.topic }
func (m *clientMessage) ContentType() string  { return m.contentType }
func (m *clientMessage) Payload() interface{} { return m.payload }

type Options struct {
	Broker Broker
}

type rpcClient struct {
	once sync.Once
	opts Options
}

func (r *rpcClient) NewMessage(topic string, message interface{}) *clientMessage {
	return &clientMessage{topic: topic, contentType: "application/json", payload: message}
}

func (r *rpcClient) Publish(ctx context.Context, msg *clientMessage) error {
	md := map[string]string{"Content-Type": msg.ContentType()}

	// encode message body
	b, err := json.Marshal(msg.Payload())
	if err != nil {
		return err
	}
	r.once.Do(func() {
		r.opts.Broker.Connect()
	})

	return r.opts.Broker.Publish(msg.Topic(), &Message{
		Header: md,
		Body:   b,
	})
}

// publisher is what micro.NewPublisher returns.
type publisher struct {
	c     *rpcClient
	topic string
}

func (p *publisher) Publish(ctx context.Context, msg interface{}) error {
	return p.c.Publish(ctx, p.c.NewMessage(p.topic, msg))
}

// --- server -------------------------------------------------------------------

type rpcServer struct {
	broker      Broker
	subscribers map[string]func(ctx context.Context, body []byte) error
}

// createSubHandler wraps the user's subscriber (called through reflection in
// go-micro) in a broker.Handler.
func (s *rpcServer) createSubHandler(topic string) Handler {
	return func(p Publication) error {
		msg := p.Message()
		ctx := context.Background()
		return s.subscribers[topic](ctx, msg.Body)
	}
}

func (s *rpcServer) Start() error {
	if err := s.broker.Connect(); err != nil {
		return err
	}
	for topic := range s.subscribers {
		if _, err := s.broker.Subscribe(topic, s.createSubHandler(topic)); err != nil {
			return err
		}
	}
	return nil
}

// --- worker service -----------------------------------------------------------

type Job struct {
	ID int `json:"id"`
}

type Result struct {
	JobID int    `json:"job_id"`
	State string `json:"state"`
}

func main() {
	reg := &memoryRegistry{services: map[string][]*Service{}}
	// the "server" binary subscribed to results on its own node
	reg.Register(&Service{Name: "topic:go.micro.srv.server.result", Nodes: []*Node{{Id: "result-1", Address: "127.0.0.1:40002"}}})

	b := newHttpBroker(reg)
	cl := &rpcClient{opts: Options{Broker: b}}
	results := &publisher{c: cl, topic: "go.micro.srv.server.result"}

	srv := &rpcServer{broker: b, subscribers: map[string]func(context.Context, []byte) error{
		"go.micro.srv.worker.job": func(ctx context.Context, body []byte) error {
			var job Job
			if err := json.Unmarshal(body, &job); err != nil {
				return err
			}
			// process the job, then publish its result
			return results.Publish(ctx, &Result{JobID: job.ID, State: "done"})
		},
	}}
	if err := srv.Start(); err != nil {
		panic(err)
	}

	// The server binary publishes a job; the worker's broker receives the POST.
	body, _ := json.Marshal(&Message{
		Header: map[string]string{":topic": "go.micro.srv.worker.job", "Content-Type": "application/json"},
		Body:   []byte(`{"id":1}`),
	})
	u, _ := url.Parse("/_sub?id=go.micro.srv.worker.job-1")
	req := &Request{Method: "POST", URL: u, Body: io.NopCloser(bytes.NewReader(body))}
	w := &responseRecorder{Code: 200}
	b.ServeHTTP(w, req)

	fmt.Println("status:", w.Code)
	for _, m := range b.outbox {
		fmt.Println(m)
	}
}
