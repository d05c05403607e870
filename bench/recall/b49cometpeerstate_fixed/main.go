// Project: CometBFT (fork of Tendermint Core), v0.34.28 / v0.37.1.
// Files/functions: consensus/reactor.go (PeerState.MarshalJSON, PeerState.SetHasProposal),
// libs/json (cmtjson.Marshal and its reflective encoder), rpc/core/consensus.go
// (Environment.DumpConsensusState), p2p peer set (Peer.Get with types.PeerStateKey).
// Issue/PR: cometbft/cometbft#524 renamed (*PeerState).ToJSON to MarshalJSON; the
// resulting deadlock (CVE-2023-34450, GHSA-mvj3-qrqh-cjvr, reported as
// cometbft/cometbft#1050 "RPC /dump_consensus_state router is not working") was fixed by
// cometbft/cometbft#865 "fix: avoid recursive call after rename to (*PeerState).MarshalJSON".
//
// PeerState.ToJSON used to lock ps.mtx and hand ps to cmtjson.Marshal. After it was
// renamed to MarshalJSON, *PeerState itself implements json.Marshaler, so the encoder,
// reflecting over the value it was given, finds the Marshaler and calls
// ps.MarshalJSON again, which locks ps.mtx a second time while the outer call still
// holds it. The RPC handler dump_consensus_state calls MarshalJSON for every peer, so it
// hangs on the first peer forever (and so does the peer's reactor, which needs ps.mtx).
// The fix marshals a defined type without methods, (*jsonPeerState)(ps), so the encoder
// falls back to plain struct encoding.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
)

// ---- libs/json (cmtjson) ----

var jsonMarshalerType = reflect.TypeOf(new(json.Marshaler)).Elem()

func Marshal(v interface{}) ([]byte, error) {
	buf := new(bytes.Buffer)
	if err := encode(buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func encode(w *bytes.Buffer, v interface{}) error {
	return encodeReflect(w, reflect.ValueOf(v))
}

func encodeReflect(w *bytes.Buffer, rv reflect.Value) error {
	if !rv.IsValid() {
		_, err := w.WriteString("null")
		return err
	}
	// If the value implements json.Marshaler, defer to it.
	if rv.Type().Implements(jsonMarshalerType) {
		bz, err := rv.Interface().(json.Marshaler).MarshalJSON()
		if err != nil {
			return err
		}
		_, err = w.Write(bz)
		return err
	}
	bz, err := json.Marshal(rv.Interface())
	if err != nil {
		return err
	}
	_, err = w.Write(bz)
	return err
}

// ---- consensus/types ----

type PeerRoundState struct {
	Height   int64 `json:"height"`
	Round    int32 `json:"round"`
	Step     uint8 `json:"step"`
	Proposal bool  `json:"proposal"`
}

type peerStateStats struct {
	Votes      int `json:"votes"`
	BlockParts int `json:"block_parts"`
}

// ---- consensus/reactor.go ----

type PeerState struct {
	peer Peer

	mtx   sync.Mutex
	PRS   PeerRoundState  `json:"round_state"`
	Stats *peerStateStats `json:"stats"`
}

func NewPeerState(peer Peer) *PeerState {
	return &PeerState{peer: peer, PRS: PeerRoundState{Round: -1}, Stats: &peerStateStats{}}
}

func (ps *PeerState) SetHasProposal(height int64, round int32) {
	ps.mtx.Lock()
	defer ps.mtx.Unlock()
	if ps.PRS.Height != height || ps.PRS.Round != round {
		ps.PRS.Height, ps.PRS.Round = height, round
	}
	ps.PRS.Proposal = true
}

// MarshalJSON implements the json.Marshaler interface.
func (ps *PeerState) MarshalJSON() ([]byte, error) {
	ps.mtx.Lock()
	defer ps.mtx.Unlock()

	type jsonPeerState PeerState
	return Marshal((*jsonPeerState)(ps))
}

// ---- p2p ----

const PeerStateKey = "ConsensusReactor.peerState"

type Peer interface {
	ID() string
	Get(key string) interface{}
	Set(key string, v interface{})
}

type peer struct {
	id   string
	mtx  sync.Mutex
	data map[string]interface{}
}

func (p *peer) ID() string { return p.id }
func (p *peer) Get(key string) interface{} {
	p.mtx.Lock()
	defer p.mtx.Unlock()
	return p.data[key]
}
func (p *peer) Set(key string, v interface{}) {
	p.mtx.Lock()
	defer p.mtx.Unlock()
	p.data[key] = v
}

type Switch struct{ peers []Peer }

func (sw *Switch) Peers() []Peer { return sw.peers }

// ---- rpc/core/consensus.go ----

type PeerStateInfo struct {
	NodeAddress string          `json:"node_address"`
	PeerState   json.RawMessage `json:"peer_state"`
}

type Environment struct{ P2PPeers *Switch }

func (env *Environment) DumpConsensusState() ([]PeerStateInfo, error) {
	peers := env.P2PPeers.Peers()
	peerStates := make([]PeerStateInfo, 0, len(peers))
	for _, peer := range peers {
		peerState, ok := peer.Get(PeerStateKey).(*PeerState)
		if !ok { // peer does not have a state yet
			continue
		}
		peerStateJSON, err := peerState.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("failed to marshal peer %v state: %w", peer.ID(), err)
		}
		peerStates = append(peerStates, PeerStateInfo{NodeAddress: peer.ID(), PeerState: peerStateJSON})
	}
	return peerStates, nil
}

func main() {
	p := &peer{id: "a1b2c3@10.0.0.2:26656", data: map[string]interface{}{}}
	ps := NewPeerState(p)
	p.Set(PeerStateKey, ps)
	ps.SetHasProposal(100, 0)

	env := &Environment{P2PPeers: &Switch{peers: []Peer{p}}}
	states, err := env.DumpConsensusState()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(states[0].PeerState))
}
