// Project: pion/webrtc v2 (peerconnection.go)
// Bug: startReceiver (one goroutine per remote track) holds pc.mu.RLock and calls pc.onTrack,
//   which RLocks pc.mu again to read the OnTrack handler. A concurrent GetTransceivers
//   (pc.mu.Lock) queues between the two read locks, so the receiver goroutine hangs forever.
// Upstream fix: don't re-acquire pc.mu on the startReceiver -> onTrack path (pion/webrtc #1425)

package main

import (
	"fmt"
	"sync"
	"time"
)

type RTPCodecType int

const (
	RTPCodecTypeAudio RTPCodecType = iota + 1
	RTPCodecTypeVideo
)

type SessionDescription struct {
	SDP    string
	tracks []incomingTrack
}

type Track struct {
	mu          sync.RWMutex
	id, label   string
	ssrc        uint32
	payloadType uint8
	kind        RTPCodecType
}

type RTPReceiver struct {
	kind  RTPCodecType
	track *Track
}

func (r *RTPReceiver) Receive(ssrc uint32) error {
	r.track = &Track{ssrc: ssrc, kind: r.kind}
	return nil
}

func (r *RTPReceiver) Track() *Track { return r.track }

type RTPTransceiver struct {
	Receiver  *RTPReceiver
	kind      RTPCodecType
	Direction string
}

type incomingTrack struct {
	kind  RTPCodecType
	label string
	id    string
	ssrc  uint32
}

type PeerConnection struct {
	mu sync.RWMutex

	currentLocalDescription  *SessionDescription
	currentRemoteDescription *SessionDescription
	rtpTransceivers          []*RTPTransceiver

	onTrackHandler func(*Track, *RTPReceiver)
}

func NewPeerConnection() *PeerConnection {
	return &PeerConnection{currentLocalDescription: &SessionDescription{SDP: "v=0"}}
}

// OnTrack sets an event handler which is called when remote track arrives from a remote peer.
func (pc *PeerConnection) OnTrack(f func(*Track, *RTPReceiver)) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.onTrackHandler = f
}

func (pc *PeerConnection) onTrack(t *Track, r *RTPReceiver) {
	pc.mu.RLock()
	defer pc.mu.RUnlock()
	if pc.onTrackHandler != nil && t != nil {
		go pc.onTrackHandler(t, r)
	}
}

// GetTransceivers returns the RTPTransceiver that are currently attached to this PeerConnection
func (pc *PeerConnection) GetTransceivers() []*RTPTransceiver {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.rtpTransceivers
}

func (pc *PeerConnection) AddTransceiverFromKind(kind RTPCodecType) *RTPTransceiver {
	t := &RTPTransceiver{kind: kind, Receiver: &RTPReceiver{kind: kind}, Direction: "recvonly"}
	pc.mu.Lock()
	pc.rtpTransceivers = append(pc.rtpTransceivers, t)
	pc.mu.Unlock()
	return t
}

func (pc *PeerConnection) startReceiver(incoming incomingTrack, receiver *RTPReceiver) {
	if err := receiver.Receive(incoming.ssrc); err != nil {
		fmt.Println("RTPReceiver Receive failed", err)
		return
	}

	pc.mu.RLock()
	hasLocal := pc.currentLocalDescription != nil
	pc.mu.RUnlock()

	if !hasLocal {
		fmt.Println("SetLocalDescription not called, unable to handle incoming media streams")
		return
	}

	track := receiver.Track()
	track.mu.Lock()
	track.id = incoming.id
	track.label = incoming.label
	track.payloadType = 111
	track.mu.Unlock()

	pc.onTrack(track, receiver)
}

func (pc *PeerConnection) startRTPReceivers(incomingTracks []incomingTrack, currentTransceivers []*RTPTransceiver) {
	for _, incoming := range incomingTracks {
		for _, t := range currentTransceivers {
			if t.kind == incoming.kind && t.Receiver != nil {
				go pc.startReceiver(incoming, t.Receiver)
				break
			}
		}
	}
}

// SetRemoteDescription sets the SessionDescription of the remote peer
func (pc *PeerConnection) SetRemoteDescription(desc SessionDescription) error {
	pc.mu.Lock()
	pc.currentRemoteDescription = &desc
	currentTransceivers := append([]*RTPTransceiver(nil), pc.rtpTransceivers...)
	pc.mu.Unlock()

	pc.startRTPReceivers(desc.tracks, currentTransceivers)
	return nil
}

func main() {
	pc := NewPeerConnection()
	got := make(chan string, 16)
	pc.OnTrack(func(t *Track, r *RTPReceiver) {
		got <- fmt.Sprintf("track %s ssrc=%d", t.id, t.ssrc)
	})
	pc.AddTransceiverFromKind(RTPCodecTypeAudio)
	pc.AddTransceiverFromKind(RTPCodecTypeVideo)

	stop := make(chan struct{})
	go func() { // SFU stats loop polling transceivers
		for {
			select {
			case <-stop:
				return
			default:
				_ = len(pc.GetTransceivers())
			}
		}
	}()

	_ = pc.SetRemoteDescription(SessionDescription{SDP: "v=0 offer", tracks: []incomingTrack{
		{kind: RTPCodecTypeAudio, id: "audio", label: "mic", ssrc: 1111},
		{kind: RTPCodecTypeVideo, id: "video", label: "cam", ssrc: 2222},
	}})

	for i := 0; i < 2; i++ {
		select {
		case s := <-got:
			fmt.Println(s)
		case <-time.After(2 * time.Second):
			fmt.Println("OnTrack never fired")
		}
	}
	close(stop)
}
