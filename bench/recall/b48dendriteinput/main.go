// Project: matrix-org/dendrite, December 2017 (roomserver component).
// Files/functions: src/github.com/matrix-org/dendrite/roomserver/input/input.go:
// RoomserverInputAPI.InputRoomEvents, RoomserverInputAPI.WriteOutputEvents;
// roomserver/input/events.go: processRoomEvent; roomserver/api/input.go:
// SendEvents (used by clientapi / federationapi).
// Reference: matrix-org/dendrite#375 "Fix up Room Server races" added a mutex
// so processRoomEvent runs one event at a time; matrix-org/dendrite PR #380
// "Fix roomserver deadlock" ("Move the mutex lock outside the loop so that we
// don't lock up if there is more than one event").
//
// The mutex was taken inside the loop over request.InputRoomEvents with a
// deferred Unlock. Deferred calls run only when InputRoomEvents returns, so for
// the second event of the same request the loop calls r.mutex.Lock() while the
// first iteration's lock is still held, and the roomserver input API hangs for
// good (every later request queues behind it). A request with a single event
// worked, which is why it slipped through. The fix takes the lock once, before
// the loop.
package main

import (
	"context"
	"fmt"
	"sync"
)

type InputRoomEvent struct {
	Kind    int
	EventID string
	RoomID  string
}

type InputRoomEventsRequest struct {
	InputRoomEvents []InputRoomEvent
}

type InputRoomEventsResponse struct{}

type OutputEvent struct {
	Type    string
	EventID string
}

// RoomEventDatabase has the storage APIs needed to store a room event.
type RoomEventDatabase interface {
	StoreEvent(ctx context.Context, ev InputRoomEvent) (int64, error)
}

// OutputRoomEventWriter has the APIs needed to write an event to the output logs.
type OutputRoomEventWriter interface {
	WriteOutputEvents(roomID string, updates []OutputEvent) error
}

type memoryDatabase struct {
	mu     sync.Mutex
	events []InputRoomEvent
}

func (d *memoryDatabase) StoreEvent(ctx context.Context, ev InputRoomEvent) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, ev)
	return int64(len(d.events)), nil
}

type syncProducer struct{ sent int }

func (p *syncProducer) SendMessages(n int) error { p.sent += n; return nil }

// RoomserverInputAPI implements api.RoomserverInputAPI
type RoomserverInputAPI struct {
	DB       RoomEventDatabase
	Producer *syncProducer
	// The kafkaesque topic to output new room events to.
	OutputRoomEventTopic string
	// Protects calls to processRoomEvent
	mutex sync.Mutex
}

// WriteOutputEvents implements OutputRoomEventWriter
func (r *RoomserverInputAPI) WriteOutputEvents(roomID string, updates []OutputEvent) error {
	return r.Producer.SendMessages(len(updates))
}

func processRoomEvent(ctx context.Context, db RoomEventDatabase, ow OutputRoomEventWriter, input InputRoomEvent) error {
	if _, err := db.StoreEvent(ctx, input); err != nil {
		return err
	}
	return ow.WriteOutputEvents(input.RoomID, []OutputEvent{{Type: "new_room_event", EventID: input.EventID}})
}

// InputRoomEvents implements api.RoomserverInputAPI
func (r *RoomserverInputAPI) InputRoomEvents(
	ctx context.Context,
	request *InputRoomEventsRequest,
	response *InputRoomEventsResponse,
) error {
	for i := range request.InputRoomEvents {
		// We lock as processRoomEvent can only be called once at a time
		r.mutex.Lock()
		defer r.mutex.Unlock()
		if err := processRoomEvent(ctx, r.DB, r, request.InputRoomEvents[i]); err != nil {
			return err
		}
	}
	return nil
}

// SendEvents to the roomserver, as the client API does after building the
// events for a createRoom request.
func SendEvents(rsAPI interface {
	InputRoomEvents(context.Context, *InputRoomEventsRequest, *InputRoomEventsResponse) error
}, roomID string, eventIDs []string) error {
	ires := make([]InputRoomEvent, len(eventIDs))
	for i, id := range eventIDs {
		ires[i] = InputRoomEvent{Kind: 1, EventID: id, RoomID: roomID}
	}
	request := InputRoomEventsRequest{InputRoomEvents: ires}
	var response InputRoomEventsResponse
	return rsAPI.InputRoomEvents(context.Background(), &request, &response)
}

func main() {
	inputAPI := &RoomserverInputAPI{DB: &memoryDatabase{}, Producer: &syncProducer{}, OutputRoomEventTopic: "roomserverOutput"}
	// createRoom sends m.room.create, m.room.member and m.room.power_levels together.
	err := SendEvents(inputAPI, "!room:localhost", []string{"$create", "$member", "$power_levels"})
	fmt.Println("room created, err =", err, "sent =", inputAPI.Producer.sent)
}
