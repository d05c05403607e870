// Project: etcd-io/etcd (v2 Go client, client/http.go httpClusterClient.Sync/Do/reset, client/members.go httpMembersAPI.List), etcd v2.0.0, January 2015.
// Bug: httpClusterClient.Sync took the cluster client's write lock (c.Lock with a deferred Unlock) before asking the cluster for its member list, but the members API sends its request through the same cluster client, whose Do read-locks the embedded RWMutex to pick an endpoint, so every Sync (for example from an AutoSync loop or etcdctl) blocks forever on its own lock. This is the original instance, fixed by commit ae062a08 "client: move lock so MembersAPI.List doesn't deadlock", which takes the lock only after List returns (a later leader-pinning variant of the same pattern was fixed by PR #6708).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

var ErrNoEndpoints = errors.New("no endpoints available")

type Member struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	PeerURLs   []string `json:"peerURLs"`
	ClientURLs []string `json:"clientURLs"`
}

type memberCollection []Member

type response struct {
	StatusCode int
	Body       []byte
}

// httpAction builds the request for one endpoint.
type httpAction interface {
	Path() string
}

type httpActionDo interface {
	Do(context.Context, httpAction) (*response, []byte, error)
}

// fakeMember is an etcd member serving /v2/members.
type fakeMember struct {
	endpoint string
	members  []Member
}

func (f *fakeMember) Do(ctx context.Context, act httpAction) (*response, []byte, error) {
	if act.Path() != "/v2/members" {
		return &response{StatusCode: 404}, nil, nil
	}
	body, _ := json.Marshal(struct {
		Members memberCollection `json:"members"`
	}{f.members})
	return &response{StatusCode: 200, Body: body}, body, nil
}

var cluster = map[string]*fakeMember{}

type httpClusterClient struct {
	endpoints []httpActionDo
	urls      []string
	sync.RWMutex
}

func (c *httpClusterClient) reset(eps []string) error {
	if len(eps) == 0 {
		return ErrNoEndpoints
	}
	c.endpoints = c.endpoints[:0]
	for _, ep := range eps {
		c.endpoints = append(c.endpoints, cluster[ep])
	}
	c.urls = eps
	return nil
}

func (c *httpClusterClient) Do(ctx context.Context, act httpAction) (*response, []byte, error) {
	c.RLock()
	defer c.RUnlock()
	if len(c.endpoints) == 0 {
		return nil, nil, ErrNoEndpoints
	}
	var resp *response
	var body []byte
	var err error
	for _, ep := range c.endpoints {
		resp, body, err = ep.Do(ctx, act)
		if err != nil || resp.StatusCode >= 500 {
			continue
		}
		return resp, body, nil
	}
	return nil, nil, err
}

func (c *httpClusterClient) Endpoints() []string {
	c.RLock()
	defer c.RUnlock()
	return append([]string(nil), c.urls...)
}

func (c *httpClusterClient) Sync(ctx context.Context) error {
	mAPI := NewMembersAPI(c)
	ms, err := mAPI.List(ctx)
	if err != nil {
		return err
	}

	c.Lock()
	defer c.Unlock()

	eps := make([]string, 0)
	for _, m := range ms {
		eps = append(eps, m.ClientURLs...)
	}
	return c.reset(eps)
}

type MembersAPI interface {
	List(ctx context.Context) ([]Member, error)
}

type membersAPIActionList struct{}

func (membersAPIActionList) Path() string { return "/v2/members" }

type httpMembersAPI struct {
	client httpActionDo
}

func NewMembersAPI(c httpActionDo) MembersAPI { return &httpMembersAPI{client: c} }

func (m *httpMembersAPI) List(ctx context.Context) ([]Member, error) {
	resp, body, err := m.client.Do(ctx, &membersAPIActionList{})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("unexpected status code %d", resp.StatusCode)
	}
	var mc struct {
		Members memberCollection `json:"members"`
	}
	if err := json.Unmarshal(body, &mc); err != nil {
		return nil, err
	}
	return []Member(mc.Members), nil
}

func main() {
	ms := []Member{
		{ID: "8e9e05c52164694d", Name: "infra0", ClientURLs: []string{"http://10.0.1.10:2379"}},
		{ID: "91bc3c398fb3c146", Name: "infra1", ClientURLs: []string{"http://10.0.1.11:2379"}},
		{ID: "fd422379fda50e48", Name: "infra2", ClientURLs: []string{"http://10.0.1.12:2379"}},
	}
	for _, m := range ms {
		cluster[m.ClientURLs[0]] = &fakeMember{endpoint: m.ClientURLs[0], members: ms}
	}
	c := &httpClusterClient{}
	if err := c.reset([]string{"http://10.0.1.10:2379"}); err != nil {
		panic(err)
	}
	// etcdctl --discovery / the AutoSync loop refreshes the endpoint list.
	if err := c.Sync(context.Background()); err != nil {
		fmt.Println("sync failed:", err)
	}
	fmt.Println("endpoints after sync:", c.Endpoints())
}
