// Project: kubernetes/kubernetes (test/utils/audit_dynamic.go AuditTestServer, LockedEventList; used by the dynamic audit integration and e2e tests), v1.17 development, October 2019 (PR #84489, approximate).
// Bug: AuditTestServer.WaitForEvents read-locked the embedded RWMutex of LockedEventList for the whole wait.PollImmediate loop, and the poll condition reads the list again through GetEventList, which takes the same RLock. When the webhook handler delivered a batch through AppendEvents (Lock) between two polls, the writer queued behind the outer read lock and the next GetEventList RLock queued behind the writer, so the test and the audit webhook server hung forever. The fix drops the outer RLock and lets GetEventList take the lock for each poll.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Event and EventList mirror k8s.io/apiserver/pkg/apis/audit.
type Event struct {
	Level      string
	Stage      string
	RequestURI string
	Verb       string
	User       string
}

type EventList struct{ Items []Event }

// AuditEvent is the expected-event description used by the audit tests.
type AuditEvent struct {
	Level      string
	Stage      string
	RequestURI string
	Verb       string
}

// LockedEventList is an event list with a lock for concurrent access.
type LockedEventList struct {
	*sync.RWMutex
	EventList EventList
}

func NewLockedEventList() *LockedEventList {
	return &LockedEventList{RWMutex: &sync.RWMutex{}}
}

// AuditTestServer is a helper server for dynamic audit testing.
type AuditTestServer struct {
	Name            string
	LockedEventList *LockedEventList
	webhookc        chan EventList // stands in for the httptest.Server webhook endpoint
}

func NewAuditTestServer(name string) *AuditTestServer {
	s := &AuditTestServer{Name: name, LockedEventList: NewLockedEventList(), webhookc: make(chan EventList)}
	go s.serve()
	return s
}

// serve plays the role of buildHandler: decode the posted EventList and append it.
func (a *AuditTestServer) serve() {
	for body := range a.webhookc {
		a.AppendEvents(body)
	}
}

// AppendEvents is a thread safe way to add events to the list.
func (a *AuditTestServer) AppendEvents(list EventList) {
	a.LockedEventList.Lock()
	defer a.LockedEventList.Unlock()
	a.LockedEventList.EventList.Items = append(a.LockedEventList.EventList.Items, list.Items...)
}

// GetEventList safely returns the internal event list.
func (a *AuditTestServer) GetEventList() EventList {
	a.LockedEventList.RLock()
	defer a.LockedEventList.RUnlock()
	return a.LockedEventList.EventList
}

// CheckAuditList searches an audit event list for the expected audit events.
func CheckAuditList(el EventList, expected []AuditEvent) (missing []AuditEvent, err error) {
	for _, e := range expected {
		found := false
		for _, ev := range el.Items {
			if ev.Level == e.Level && ev.Stage == e.Stage && ev.RequestURI == e.RequestURI && ev.Verb == e.Verb {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, e)
		}
	}
	return missing, nil
}

// pollImmediate is wait.PollImmediate reduced to what the helper uses.
func pollImmediate(interval, timeout time.Duration, condition func() (bool, error), afterFirst func()) error {
	deadline := time.Now().Add(timeout)
	for i := 0; ; i++ {
		if ok, err := condition(); err != nil || ok {
			return err
		}
		if i == 0 && afterFirst != nil {
			afterFirst()
		}
		if time.Now().After(deadline) {
			return errors.New("timed out waiting for the condition")
		}
		time.Sleep(interval)
	}
}

// WaitForEvents waits for the given events to arrive in the server or the 30s timeout is reached.
func (a *AuditTestServer) WaitForEvents(expected []AuditEvent, afterFirstPoll func()) ([]AuditEvent, error) {
	var missing []AuditEvent
	err := pollImmediate(50*time.Millisecond, 30*time.Second, func() (bool, error) {
		var err error
		el := a.GetEventList()
		if len(el.Items) < 1 {
			return false, nil
		}
		missing, err = CheckAuditList(el, expected)
		if err != nil {
			return false, nil
		}
		return len(missing) == 0, nil
	}, afterFirstPoll)
	return missing, err
}

func main() {
	server := NewAuditTestServer("test-sink")
	expected := []AuditEvent{{Level: "RequestResponse", Stage: "ResponseComplete", RequestURI: "/api/v1/namespaces/default/configmaps", Verb: "create"}}

	// The apiserver's dynamic audit backend posts its batch once the test
	// has started waiting (forced here right after the first empty poll).
	post := func() {
		go func() {
			server.webhookc <- EventList{Items: []Event{{Level: "RequestResponse", Stage: "ResponseComplete", RequestURI: "/api/v1/namespaces/default/configmaps", Verb: "create", User: "admin"}}}
		}()
	}
	missing, err := server.WaitForEvents(expected, post)
	if err != nil {
		panic(err)
	}
	fmt.Println("all audit events received, missing:", len(missing))
}
