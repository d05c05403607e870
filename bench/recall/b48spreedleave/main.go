// Project: strukturag/nextcloud-spreed-signaling 1.2.x (standalone signaling
// server for Nextcloud Talk).
// Files/functions: room.go: Room.run, Room.publishActiveSessions,
// Room.RemoveSession; clientsession.go: ClientSession.LeaveRoom,
// ClientSession.doUnsubscribeRoomEvents, ClientSession.RoomSessionId.
// Reference: strukturag/nextcloud-spreed-signaling PR #742 "Fix lock order
// inversion when leaving room / publishing room sessions." (the inversion
// appeared once PR #497 made RoomSessionId lock the session mutex).
//
// The room goroutine periodically runs publishActiveSessions, which holds the
// room's RWMutex (read) while walking its sessions and asks each
// *ClientSession for RoomSessionId(), which takes the session's mutex. A
// client leaving the room goes the other way: ClientSession.LeaveRoom holds
// the session mutex, unregisters its room listener and then calls
// Room.RemoveSession, which needs the room's write lock. With the room
// goroutine parked on the session mutex and the leaving session parked on
// the room lock, both the room and the session are stuck. The fix protects
// roomSessionId with its own lock (roomSessionIdLock), so RoomSessionId no
// longer needs the session mutex and publishActiveSessions never takes
// room.mu -> session.mu.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var updateActiveSessionsInterval = 10 * time.Millisecond

type Session interface {
	PublicId() string
	BackendUrl() string
}

// AsyncEvents delivers room / session events (NATS in clustered setups).
type AsyncEvents interface {
	UnregisterRoomListener(roomId string, listener any)
}

type natsEvents struct{}

func (natsEvents) UnregisterRoomListener(roomId string, listener any) {
	time.Sleep(100 * time.Millisecond) // unsubscribe round trip
}

type Room struct {
	id        string
	closeChan chan bool
	mu        *sync.RWMutex
	sessions  map[string]Session
}

func NewRoom(id string) *Room {
	r := &Room{id: id, closeChan: make(chan bool, 1), mu: &sync.RWMutex{}, sessions: map[string]Session{}}
	go r.run()
	return r
}

func (r *Room) Id() string { return r.id }

func (r *Room) run() {
	ticker := time.NewTicker(updateActiveSessionsInterval)
	defer ticker.Stop()
	for {
		select {
		case <-r.closeChan:
			return
		case <-ticker.C:
			r.publishActiveSessions()
		}
	}
}

func (r *Room) AddSession(s Session) {
	r.mu.Lock()
	r.sessions[s.PublicId()] = s
	r.mu.Unlock()
}

// Returns "true" if there are still clients in the room.
func (r *Room) RemoveSession(session Session) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.sessions, session.PublicId())
	if len(r.sessions) > 0 {
		return true
	}
	select {
	case r.closeChan <- true:
	default:
	}
	return false
}

func (r *Room) publishActiveSessions() int {
	r.mu.RLock()
	defer r.mu.RUnlock()

	entries := make(map[string][]string)
	for _, session := range r.sessions {
		u := session.BackendUrl()
		if u == "" {
			continue
		}
		var sid string
		switch sess := session.(type) {
		case *ClientSession:
			// Use Nextcloud session id
			sid = sess.RoomSessionId()
		default:
			continue
		}
		entries[u] = append(entries[u], sid)
	}
	return len(entries)
}

type ClientSession struct {
	publicId   string
	backendUrl string
	events     AsyncEvents

	mu            sync.Mutex
	room          atomic.Pointer[Room]
	roomSessionId string
}

func (s *ClientSession) PublicId() string   { return s.publicId }
func (s *ClientSession) BackendUrl() string { return s.backendUrl }
func (s *ClientSession) GetRoom() *Room     { return s.room.Load() }
func (s *ClientSession) SetRoom(r *Room)    { s.room.Store(r) }

func (s *ClientSession) RoomSessionId() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roomSessionId
}

func (s *ClientSession) LeaveRoom(notify bool) *Room {
	s.mu.Lock()
	defer s.mu.Unlock()

	room := s.GetRoom()
	if room == nil {
		return nil
	}

	s.doUnsubscribeRoomEvents(notify)
	s.SetRoom(nil)
	room.RemoveSession(s)
	return room
}

func (s *ClientSession) doUnsubscribeRoomEvents(notify bool) {
	room := s.GetRoom()
	if room != nil {
		s.events.UnregisterRoomListener(room.Id(), s)
	}
	s.roomSessionId = ""
}

func main() {
	room := NewRoom("abc123")
	for i, rsid := range []string{"nc-session-1", "nc-session-2"} {
		s := &ClientSession{publicId: fmt.Sprintf("pub%d", i), backendUrl: "https://cloud.example.com", events: natsEvents{}, roomSessionId: rsid}
		s.SetRoom(room)
		room.AddSession(s)
	}
	leaving := room.sessions["pub0"].(*ClientSession)
	leaving.LeaveRoom(true)
	fmt.Println("left room")
}
