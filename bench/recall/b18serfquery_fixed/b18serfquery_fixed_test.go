// Project: hashicorp/serf (serf/query.go)
// Bug: QueryResponse.sendResponse held r.closeLock while doing a blocking
//      send on the buffered respCh (sized to the member count). With relayed
//      (duplicate) responses the buffer fills up; the send then blocks with
//      closeLock held, while the consumer that would drain respCh is blocked
//      in Finished() -> closeLock, and the deadline timer's Close() is too.
// Fix: dedupe responses by node and use a non-blocking send (select with
//      default, dropping the response) while holding closeLock.

package b18serfquery_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type LamportTime uint64

type NodeResponse struct {
	From    string
	Payload []byte
}

// QueryResponse is returned for each new Query. It is used to collect
// Ack's as well as responses and to provide those back to a client.
type QueryResponse struct {
	ackCh     chan string
	acks      map[string]struct{}
	deadline  time.Time
	id        uint32
	lTime     LamportTime
	respCh    chan NodeResponse
	responses map[string]struct{}

	closed    bool
	closeLock sync.Mutex
}

func newQueryResponse(n int, id uint32, timeout time.Duration) *QueryResponse {
	return &QueryResponse{
		ackCh:     make(chan string, n),
		acks:      make(map[string]struct{}),
		deadline:  time.Now().Add(timeout),
		id:        id,
		respCh:    make(chan NodeResponse, n),
		responses: make(map[string]struct{}),
	}
}

// Close is used to close the query, which will close the underlying
// channels and prevent further deliveries
func (r *QueryResponse) Close() {
	r.closeLock.Lock()
	defer r.closeLock.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	close(r.ackCh)
	close(r.respCh)
}

// Deadline returns the ending deadline of the query
func (r *QueryResponse) Deadline() time.Time { return r.deadline }

// Finished returns if the query is finished running
func (r *QueryResponse) Finished() bool {
	r.closeLock.Lock()
	defer r.closeLock.Unlock()
	return r.closed || time.Now().After(r.deadline)
}

// ResponseCh returns a channel that can be used to listen for responses.
func (r *QueryResponse) ResponseCh() <-chan NodeResponse { return r.respCh }

// sendResponse sends a response on the response channel ensuring the channel
// is not closed.
func (r *QueryResponse) sendResponse(nr NodeResponse) error {
	r.closeLock.Lock()
	defer r.closeLock.Unlock()
	if r.closed {
		return nil
	}
	// Relayed responses may arrive more than once; deliver each node once.
	if _, ok := r.responses[nr.From]; ok {
		return nil
	}
	// Never block while holding closeLock.
	select {
	case r.respCh <- nr:
		r.responses[nr.From] = struct{}{}
	default:
		return errors.New("serf: failed to deliver query response, dropping")
	}
	return nil
}

type Serf struct {
	queryLock     sync.RWMutex
	queryResponse map[LamportTime]*QueryResponse
	queryClock    LamportTime
	members       []string
}

// Query starts a query; the response is closed automatically at its deadline.
func (s *Serf) Query(name string, timeout time.Duration) *QueryResponse {
	s.queryLock.Lock()
	s.queryClock++
	resp := newQueryResponse(len(s.members), uint32(s.queryClock), timeout)
	resp.lTime = s.queryClock
	s.queryResponse[resp.lTime] = resp
	s.queryLock.Unlock()

	time.AfterFunc(timeout, func() {
		s.queryLock.Lock()
		delete(s.queryResponse, resp.lTime)
		resp.Close()
		s.queryLock.Unlock()
	})
	return resp
}

// handleQueryResponse is called by the memberlist delegate for every
// response message, including ones relayed through other members.
func (s *Serf) handleQueryResponse(ltime LamportTime, from string, payload []byte) {
	s.queryLock.RLock()
	query, ok := s.queryResponse[ltime]
	s.queryLock.RUnlock()
	if !ok {
		return
	}
	_ = query.sendResponse(NodeResponse{From: from, Payload: payload})
}

func TestRelayedResponsesOverflow(t *testing.T) {
	s := &Serf{queryResponse: map[LamportTime]*QueryResponse{}, members: []string{"node-a", "node-b"}}
	resp := s.Query("deploy-status", 200*time.Millisecond)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // memberlist packet handler: direct + relayed copies
		defer wg.Done()
		for _, from := range []string{"node-a", "node-b", "node-a", "node-b"} {
			s.handleQueryResponse(resp.lTime, from, []byte("ok"))
		}
	}()
	go func() { // agent streaming responses to the CLI
		defer wg.Done()
		seen := map[string]bool{}
		for !resp.Finished() {
			select {
			case nr, ok := <-resp.ResponseCh():
				if !ok {
					return
				}
				seen[nr.From] = true
				time.Sleep(30 * time.Millisecond) // write to the IPC client
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	wg.Wait()
}
