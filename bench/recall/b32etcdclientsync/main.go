// Project: etcd (v2 client package "client": client/client.go, client/members.go), etcd v3.0.x
// Issue: etcd-io/etcd PR #6708 "client: Prevent deadlocks in Sync" (fix shipped in v3.1)
//
// httpClusterClient embeds a sync.RWMutex. Sync takes the write lock
// (c.Lock, line 192) and, when the member list changed, calls SetEndpoints
// with the lock still held. With EndpointSelectionPrioritizeLeader,
// SetEndpoints calls getLeaderEndpoint, which builds a MembersAPI on top of
// the client itself (NewMembersAPI(c)) and calls Leader. httpMembersAPI.Leader
// goes through the httpClient interface back into httpClusterClient.Do, whose
// first statement is c.RLock() (line 225). The goroutine already holds the
// write lock, so the RLock blocks forever: Sync -> SetEndpoints ->
// getLeaderEndpoint -> httpMembersAPI.Leader -> (httpClient).Do -> RLock.
//
// main creates a client on one endpoint (New -> SetEndpoints runs without
// the lock, so it works), then the cluster grows to two members and Sync is
// called: the endpoint lists differ, the fast path is skipped, and the
// goroutine deadlocks on its own lock.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net/url"
	"reflect"
	"sort"
	"sync"
	"time"
)

type EndpointSelectionMode int

const (
	EndpointSelectionRandom EndpointSelectionMode = iota
	EndpointSelectionPrioritizeLeader
)

var (
	ErrNoEndpoints      = errors.New("client: no endpoints available")
	ErrNoLeaderEndpoint = errors.New("client: no leader endpoint available")
)

// Request/Response stand in for net/http's types.
type Request struct {
	Method string
	URL    url.URL
}

type Response struct {
	StatusCode int
	Body       []byte
}

type CancelableTransport interface {
	RoundTrip(*Request) (*Response, error)
}

type Config struct {
	Endpoints     []string
	Transport     CancelableTransport
	SelectionMode EndpointSelectionMode
}

type Client interface {
	Sync(context.Context) error
	Endpoints() []string
	SetEndpoints(eps []string) error
	httpClient
}

type httpClient interface {
	Do(context.Context, httpAction) (*Response, []byte, error)
}

type httpAction interface {
	HTTPRequest(url.URL) *Request
}

type httpClientFactory func(url.URL) httpClient

func newHTTPClientFactory(tr CancelableTransport) httpClientFactory {
	return func(ep url.URL) httpClient {
		return &simpleHTTPClient{transport: tr, endpoint: ep}
	}
}

type simpleHTTPClient struct {
	transport CancelableTransport
	endpoint  url.URL
}

func (c *simpleHTTPClient) Do(ctx context.Context, act httpAction) (*Response, []byte, error) {
	req := act.HTTPRequest(c.endpoint)
	resp, err := c.transport.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	return resp, resp.Body, nil
}

func New(cfg Config) (Client, error) {
	c := &httpClusterClient{
		clientFactory: newHTTPClientFactory(cfg.Transport),
		rand:          rand.New(rand.NewSource(int64(time.Now().Nanosecond()))),
		selectionMode: cfg.SelectionMode,
	}
	if err := c.SetEndpoints(cfg.Endpoints); err != nil {
		return nil, err
	}
	return c, nil
}

type httpClusterClient struct {
	clientFactory httpClientFactory
	endpoints     []url.URL
	pinned        int
	sync.RWMutex
	rand          *rand.Rand
	selectionMode EndpointSelectionMode
}

func (c *httpClusterClient) getLeaderEndpoint() (string, error) {
	mAPI := NewMembersAPI(c)
	leader, err := mAPI.Leader(context.Background())
	if err != nil {
		return "", err
	}

	return leader.ClientURLs[0], nil // TODO: how to handle multiple client URLs?
}

func (c *httpClusterClient) SetEndpoints(eps []string) error {
	if len(eps) == 0 {
		return ErrNoEndpoints
	}

	neps := make([]url.URL, len(eps))
	for i, ep := range eps {
		u, err := url.Parse(ep)
		if err != nil {
			return err
		}
		neps[i] = *u
	}

	switch c.selectionMode {
	case EndpointSelectionRandom:
		c.endpoints = shuffleEndpoints(c.rand, neps)
		c.pinned = 0
	case EndpointSelectionPrioritizeLeader:
		c.endpoints = neps
		lep, err := c.getLeaderEndpoint()
		if err != nil {
			return ErrNoLeaderEndpoint
		}

		for i := range c.endpoints {
			if c.endpoints[i].String() == lep {
				c.pinned = i
				break
			}
		}
		// If endpoint doesn't exist, then ignore it and keep using the current pinned endpoint
	default:
		return fmt.Errorf("invalid endpoint selection mode: %d", c.selectionMode)
	}

	return nil
}

func (c *httpClusterClient) Endpoints() []string {
	c.RLock()
	defer c.RUnlock()

	eps := make([]string, len(c.endpoints))
	for i, ep := range c.endpoints {
		eps[i] = ep.String()
	}

	return eps
}

func (c *httpClusterClient) Sync(ctx context.Context) error {
	mAPI := NewMembersAPI(c)
	ms, err := mAPI.List(ctx)
	if err != nil {
		return err
	}

	c.Lock()
	defer c.Unlock()

	var eps []string
	for _, m := range ms {
		eps = append(eps, m.ClientURLs...)
	}
	sort.Sort(sort.StringSlice(eps))

	ceps := make([]string, len(c.endpoints))
	for i, cep := range c.endpoints {
		ceps[i] = cep.String()
	}
	sort.Sort(sort.StringSlice(ceps))
	// fast path if no change happens
	// this helps client to pin the endpoint when no cluster change
	if reflect.DeepEqual(eps, ceps) {
		return nil
	}

	return c.SetEndpoints(eps)
}

type ClusterError struct {
	Errors []error
}

func (ce *ClusterError) Error() string {
	return fmt.Sprintf("client: etcd cluster is unavailable or misconfigured: %v", ce.Errors)
}

func (c *httpClusterClient) Do(ctx context.Context, act httpAction) (*Response, []byte, error) {
	action := act
	c.RLock()
	leps := len(c.endpoints)
	eps := make([]url.URL, leps)
	n := copy(eps, c.endpoints)
	pinned := c.pinned
	c.RUnlock()

	if leps == 0 {
		return nil, nil, ErrNoEndpoints
	}

	if leps != n {
		return nil, nil, errors.New("unable to pick endpoint: copy failed")
	}

	var resp *Response
	var body []byte
	var err error
	cerr := &ClusterError{}

	for i := pinned; i < leps+pinned; i++ {
		k := i % leps
		hc := c.clientFactory(eps[k])
		resp, body, err = hc.Do(ctx, action)
		if err != nil {
			cerr.Errors = append(cerr.Errors, err)
			continue
		}
		if resp.StatusCode/100 == 5 {
			cerr.Errors = append(cerr.Errors, fmt.Errorf("client: etcd member %s has no leader", eps[k].String()))
			continue
		}
		if k != pinned {
			c.Lock()
			c.pinned = k
			c.Unlock()
		}
		return resp, body, nil
	}

	return nil, nil, cerr
}

func shuffleEndpoints(r *rand.Rand, eps []url.URL) []url.URL {
	p := r.Perm(len(eps))
	neps := make([]url.URL, len(eps))
	for i, k := range p {
		neps[i] = eps[k]
	}
	return neps
}

// members.go

type Member struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	PeerURLs   []string `json:"peerURLs"`
	ClientURLs []string `json:"clientURLs"`
}

type memberCollection []Member

type MembersAPI interface {
	List(ctx context.Context) ([]Member, error)
	Leader(ctx context.Context) (*Member, error)
}

func NewMembersAPI(c Client) MembersAPI {
	return &httpMembersAPI{
		client: c,
	}
}

type httpMembersAPI struct {
	client httpClient
}

func (m *httpMembersAPI) List(ctx context.Context) ([]Member, error) {
	req := &membersAPIActionList{}
	resp, body, err := m.client.Do(ctx, req)
	if err != nil {
		return nil, err
	}

	if err := assertStatusCode(resp.StatusCode, 200); err != nil {
		return nil, err
	}

	var mCollection memberCollection
	if err := json.Unmarshal(body, &mCollection); err != nil {
		return nil, err
	}

	return []Member(mCollection), nil
}

func (m *httpMembersAPI) Leader(ctx context.Context) (*Member, error) {
	req := &membersAPIActionLeader{}
	resp, body, err := m.client.Do(ctx, req)
	if err != nil {
		return nil, err
	}

	if err := assertStatusCode(resp.StatusCode, 200); err != nil {
		return nil, err
	}

	var leader Member
	if err := json.Unmarshal(body, &leader); err != nil {
		return nil, err
	}

	return &leader, nil
}

type membersAPIActionList struct{}

func (l *membersAPIActionList) HTTPRequest(ep url.URL) *Request {
	u := ep
	u.Path = "/v2/members"
	return &Request{Method: "GET", URL: u}
}

type membersAPIActionLeader struct{}

func (l *membersAPIActionLeader) HTTPRequest(ep url.URL) *Request {
	u := ep
	u.Path = "/v2/members/leader"
	return &Request{Method: "GET", URL: u}
}

func assertStatusCode(got int, want ...int) error {
	for _, w := range want {
		if w == got {
			return nil
		}
	}
	return fmt.Errorf("unexpected status code %d", got)
}

// fakeCluster answers the members API like an etcd cluster would.
type fakeCluster struct {
	mu      sync.Mutex
	members []Member
}

func (f *fakeCluster) RoundTrip(req *Request) (*Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var v interface{}
	switch req.URL.Path {
	case "/v2/members":
		v = f.members
	case "/v2/members/leader":
		v = f.members[0]
	default:
		return &Response{StatusCode: 404}, nil
	}
	b, _ := json.Marshal(v)
	return &Response{StatusCode: 200, Body: b}, nil
}

func (f *fakeCluster) addMember(m Member) {
	f.mu.Lock()
	f.members = append(f.members, m)
	f.mu.Unlock()
}

func main() {
	cluster := &fakeCluster{members: []Member{
		{ID: "1", Name: "infra1", ClientURLs: []string{"http://127.0.0.1:2379"}},
	}}
	c, err := New(Config{
		Endpoints:     []string{"http://127.0.0.1:2379"},
		Transport:     cluster,
		SelectionMode: EndpointSelectionPrioritizeLeader,
	})
	if err != nil {
		panic(err)
	}

	// A member joins; the next Sync sees a different endpoint list.
	cluster.addMember(Member{ID: "2", Name: "infra2", ClientURLs: []string{"http://127.0.0.1:22379"}})
	if err := c.Sync(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println("synced endpoints:", c.Endpoints())
}
