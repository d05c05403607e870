// Project: Tendermint Core (now CometBFT), component: consensus (ConsensusState +
// ConsensusReactor + libs/events EventSwitch).
// Bug (as remembered): ConsensusState fired internal events (EventNewRoundStep,
// EventVote, ...) through its EventSwitch while holding cs.mtx. The reactor had
// registered listeners whose callbacks called back into cs.GetRoundState(),
// which takes cs.mtx.RLock(). FireEvent loops over every registered listener
// and calls it synchronously, so the callback re-acquired cs.mtx on the same
// goroutine and the consensus receiveRoutine hung. The fix was to broadcast the
// RoundState passed as the event data instead of calling back into the state.
package main

import (
	"fmt"
	"sync"
	"time"
)

type EventData interface{}
type EventCallback func(data EventData)

// ---- libs/events ----

type eventCell struct {
	mtx       sync.RWMutex
	listeners map[string]EventCallback
}

func (cell *eventCell) FireEvent(data EventData) {
	cell.mtx.RLock()
	cbs := make([]EventCallback, 0, len(cell.listeners))
	for _, cb := range cell.listeners {
		cbs = append(cbs, cb)
	}
	cell.mtx.RUnlock()
	for _, cb := range cbs {
		cb(data)
	}
}

type EventSwitch struct {
	mtx        sync.RWMutex
	eventCells map[string]*eventCell
}

func NewEventSwitch() *EventSwitch {
	return &EventSwitch{eventCells: make(map[string]*eventCell)}
}

func (evsw *EventSwitch) AddListenerForEvent(listenerID, event string, cb EventCallback) {
	evsw.mtx.Lock()
	cell := evsw.eventCells[event]
	if cell == nil {
		cell = &eventCell{listeners: make(map[string]EventCallback)}
		evsw.eventCells[event] = cell
	}
	evsw.mtx.Unlock()
	cell.mtx.Lock()
	cell.listeners[listenerID] = cb
	cell.mtx.Unlock()
}

func (evsw *EventSwitch) FireEvent(event string, data EventData) {
	evsw.mtx.RLock()
	cell := evsw.eventCells[event]
	evsw.mtx.RUnlock()
	if cell == nil {
		return
	}
	cell.FireEvent(data)
}

// ---- consensus/state.go ----

const EventNewRoundStep = "NewRoundStep"

type RoundState struct {
	Height int64
	Round  int32
	Step   int8
}

type msgInfo struct{ height int64 }

type ConsensusState struct {
	mtx sync.RWMutex
	RoundState
	evsw      *EventSwitch
	peerMsgCh chan msgInfo
}

func (cs *ConsensusState) GetRoundState() *RoundState {
	cs.mtx.RLock() // DEADLOCK HERE
	defer cs.mtx.RUnlock()
	rs := cs.RoundState
	return &rs
}

func (cs *ConsensusState) newStep() {
	rs := cs.RoundState
	cs.evsw.FireEvent(EventNewRoundStep, &rs)
}

func (cs *ConsensusState) enterNewRound(height int64, round int32) {
	cs.Height, cs.Round, cs.Step = height, round, 1
	cs.newStep()
}

func (cs *ConsensusState) handleMsg(mi msgInfo) {
	cs.mtx.Lock()
	defer cs.mtx.Unlock()
	cs.enterNewRound(mi.height, cs.Round+1)
}

func (cs *ConsensusState) receiveRoutine() {
	for mi := range cs.peerMsgCh {
		cs.handleMsg(mi)
	}
}

// ---- consensus/reactor.go ----

type ConsensusReactor struct {
	conS *ConsensusState
}

func (conR *ConsensusReactor) subscribeToBroadcastEvents() {
	const subscriber = "consensus-reactor"
	conR.conS.evsw.AddListenerForEvent(subscriber, EventNewRoundStep, func(data EventData) {
		conR.broadcastNewRoundStepMessage(conR.conS.GetRoundState())
	})
}

func (conR *ConsensusReactor) broadcastNewRoundStepMessage(rs *RoundState) {
	fmt.Printf("broadcast NewRoundStep h=%d r=%d s=%d\n", rs.Height, rs.Round, rs.Step)
}

func main() {
	cs := &ConsensusState{evsw: NewEventSwitch(), peerMsgCh: make(chan msgInfo, 4)}
	conR := &ConsensusReactor{conS: cs}
	conR.subscribeToBroadcastEvents()
	go cs.receiveRoutine()
	go func() {
		for h := int64(1); h <= 3; h++ {
			cs.peerMsgCh <- msgInfo{height: h}
		}
	}()
	time.Sleep(100 * time.Millisecond)
}
