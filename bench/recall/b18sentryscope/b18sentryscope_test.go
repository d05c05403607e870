// Project: getsentry/sentry-go (scope.go)
// Bug: Scope.ApplyToEvent held scope.mu.RLock while running the event
//      processors registered with Scope.AddEventProcessor. A processor that
//      enriches the scope (scope.SetTag / SetContext) takes scope.mu.Lock on
//      the same goroutine -> the write lock waits forever for the caller's
//      own read lock.
// Fix: ApplyToEvent copies the processors slice under the read lock and
//      releases the lock before invoking them.

package b18sentryscope

import (
	"sync"
	"testing"
	"time"
)

type Level string

const (
	LevelInfo  Level = "info"
	LevelError Level = "error"
)

type Breadcrumb struct {
	Category  string
	Message   string
	Timestamp time.Time
}

type Event struct {
	EventID     string
	Level       Level
	Message     string
	Tags        map[string]string
	Contexts    map[string]map[string]interface{}
	Breadcrumbs []*Breadcrumb
	Transaction string
}

type EventHint struct {
	OriginalException error
}

type EventProcessor func(event *Event, hint *EventHint) *Event

type Scope struct {
	mu              sync.RWMutex
	breadcrumbs     []*Breadcrumb
	tags            map[string]string
	contexts        map[string]map[string]interface{}
	level           Level
	transaction     string
	fingerprint     []string
	eventProcessors []EventProcessor
}

func NewScope() *Scope {
	return &Scope{tags: map[string]string{}, contexts: map[string]map[string]interface{}{}}
}

func (scope *Scope) AddBreadcrumb(b *Breadcrumb, limit int) {
	scope.mu.Lock()
	defer scope.mu.Unlock()
	scope.breadcrumbs = append(scope.breadcrumbs, b)
	if len(scope.breadcrumbs) > limit {
		scope.breadcrumbs = scope.breadcrumbs[1:]
	}
}

func (scope *Scope) SetTag(key, value string) {
	scope.mu.Lock()
	defer scope.mu.Unlock()
	scope.tags[key] = value
}

func (scope *Scope) SetContext(key string, value map[string]interface{}) {
	scope.mu.Lock()
	defer scope.mu.Unlock()
	scope.contexts[key] = value
}

func (scope *Scope) AddEventProcessor(processor EventProcessor) {
	scope.mu.Lock()
	defer scope.mu.Unlock()
	scope.eventProcessors = append(scope.eventProcessors, processor)
}

// ApplyToEvent takes the data from the current scope and attaches it to the event.
func (scope *Scope) ApplyToEvent(event *Event, hint *EventHint) *Event {
	scope.mu.RLock()
	defer scope.mu.RUnlock()

	if len(scope.breadcrumbs) > 0 {
		event.Breadcrumbs = append(event.Breadcrumbs, scope.breadcrumbs...)
	}
	if event.Tags == nil {
		event.Tags = make(map[string]string, len(scope.tags))
	}
	for k, v := range scope.tags {
		event.Tags[k] = v
	}
	if event.Contexts == nil {
		event.Contexts = map[string]map[string]interface{}{}
	}
	for k, v := range scope.contexts {
		event.Contexts[k] = v
	}
	if scope.level != "" {
		event.Level = scope.level
	}
	if scope.transaction != "" {
		event.Transaction = scope.transaction
	}

	for _, processor := range scope.eventProcessors {
		event = processor(event, hint)
		if event == nil {
			return nil
		}
	}
	return event
}

type Client struct {
	mu     sync.Mutex
	events []*Event
}

func (client *Client) CaptureEvent(event *Event, hint *EventHint, scope *Scope) string {
	if scope != nil {
		event = scope.ApplyToEvent(event, hint)
	}
	if event == nil {
		return ""
	}
	client.mu.Lock()
	client.events = append(client.events, event)
	client.mu.Unlock()
	return event.EventID
}

type Hub struct {
	client *Client
	scope  *Scope
}

func (hub *Hub) Scope() *Scope { return hub.scope }

func (hub *Hub) CaptureMessage(message string) string {
	return hub.client.CaptureEvent(&Event{EventID: "9ec79c33ec9942ab8353589fcb2e04dc", Level: LevelInfo, Message: message}, &EventHint{}, hub.scope)
}

func TestProcessorEnrichingScope(t *testing.T) {
	hub := &Hub{client: &Client{}, scope: NewScope()}
	hub.Scope().SetTag("service", "billing")
	hub.Scope().AddBreadcrumb(&Breadcrumb{Category: "http", Message: "GET /invoices", Timestamp: time.Now()}, 100)

	// Processor remembers the last reported message on the scope so that
	// follow-up events can be correlated.
	hub.Scope().AddEventProcessor(func(event *Event, hint *EventHint) *Event {
		hub.Scope().SetTag("last_event_id", event.EventID)
		return event
	})

	done := make(chan string)
	go func() {
		done <- hub.CaptureMessage("invoice export failed")
	}()
	if id := <-done; id == "" {
		t.Fatal("event dropped")
	}
}
