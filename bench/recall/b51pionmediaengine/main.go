// Project: Pion WebRTC (pion/webrtc) v3.1.x (2021).
// Files/functions: mediaengine.go (MediaEngine.getRTPParametersByKind,
// MediaEngine.getCodecsByKind, MediaEngine.updateFromRemoteDescription),
// rtpsender.go (RTPSender.Send), peerconnection.go
// (PeerConnection.SetRemoteDescription).
// PR: pion/webrtc#2019 "Fixed locking order in SRTP and DataChannel", whose
// second part removes a recursive RLock in the MediaEngine (found by running
// the LiveKit SFU with go-deadlock).
//
// getRTPParametersByKind read-locks MediaEngine.mu for the whole function:
// it walks the registered / negotiated header extensions and then builds the
// result with Codecs: m.getCodecsByKind(typ), and getCodecsByKind read-locks
// MediaEngine.mu again. RTPSender.Send calls getRTPParametersByKind to build
// the TrackLocalContext it binds the track with. If a renegotiation runs
// SetRemoteDescription at the same moment, updateFromRemoteDescription asks
// for the write lock between the two read locks; Go's RWMutex then blocks the
// nested RLock behind the pending writer, and the writer waits for the outer
// RLock forever. The fix calls getCodecsByKind before taking the read lock
// ("perform before locking to prevent recursive RLocks").
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type RTPCodecType int

const (
	RTPCodecTypeAudio RTPCodecType = iota + 1
	RTPCodecTypeVideo
)

type RTPTransceiverDirection int

const (
	RTPTransceiverDirectionSendonly RTPTransceiverDirection = iota + 1
	RTPTransceiverDirectionRecvonly
)

type RTPCodecParameters struct {
	MimeType    string
	PayloadType uint8
}

type RTPHeaderExtensionParameter struct {
	URI string
	ID  int
}

type RTPParameters struct {
	HeaderExtensions []RTPHeaderExtensionParameter
	Codecs           []RTPCodecParameters
}

type mediaEngineHeaderExtension struct {
	uri               string
	isAudio, isVideo  bool
	allowedDirections []RTPTransceiverDirection
}

type MediaEngine struct {
	negotiatedVideo, negotiatedAudio             bool
	videoCodecs, audioCodecs                     []RTPCodecParameters
	negotiatedVideoCodecs, negotiatedAudioCodecs []RTPCodecParameters
	headerExtensions                             []mediaEngineHeaderExtension
	negotiatedHeaderExtensions                   map[int]mediaEngineHeaderExtension

	mu sync.RWMutex
}

func haveRTPTransceiverDirectionIntersection(haystack, needle []RTPTransceiverDirection) bool {
	// Matching the extension against the transceiver directions takes a while
	// for a long extension list.
	time.Sleep(50 * time.Millisecond)
	for _, n := range needle {
		for _, h := range haystack {
			if n == h {
				return true
			}
		}
	}
	return false
}

func (m *MediaEngine) getCodecsByKind(typ RTPCodecType) []RTPCodecParameters {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if typ == RTPCodecTypeVideo {
		if m.negotiatedVideo {
			return m.negotiatedVideoCodecs
		}
		return m.videoCodecs
	}
	if m.negotiatedAudio {
		return m.negotiatedAudioCodecs
	}
	return m.audioCodecs
}

func (m *MediaEngine) getRTPParametersByKind(typ RTPCodecType, directions []RTPTransceiverDirection) RTPParameters {
	headerExtensions := make([]RTPHeaderExtensionParameter, 0)

	m.mu.RLock()
	defer m.mu.RUnlock()
	for id, e := range m.headerExtensions {
		if haveRTPTransceiverDirectionIntersection(e.allowedDirections, directions) && (e.isAudio && typ == RTPCodecTypeAudio || e.isVideo && typ == RTPCodecTypeVideo) {
			headerExtensions = append(headerExtensions, RTPHeaderExtensionParameter{ID: id + 1, URI: e.uri})
		}
	}

	return RTPParameters{
		HeaderExtensions: headerExtensions,
		Codecs:           m.getCodecsByKind(typ),
	}
}

func (m *MediaEngine) updateFromRemoteDescription(sdp string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if strings.Contains(sdp, "m=video") && !m.negotiatedVideo {
		m.negotiatedVideo = true
		m.negotiatedVideoCodecs = append(m.negotiatedVideoCodecs, m.videoCodecs[0])
	}
	return nil
}

type API struct{ mediaEngine *MediaEngine }

type TrackLocal struct{ kind RTPCodecType }

type TrackLocalContext struct {
	id     string
	params RTPParameters
	ssrc   uint32
}

type RTPSender struct {
	mu      sync.RWMutex
	id      string
	track   *TrackLocal
	api     *API
	context TrackLocalContext
}

func (r *RTPSender) Send(ssrc uint32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.context = TrackLocalContext{
		id:     r.id,
		params: r.api.mediaEngine.getRTPParametersByKind(r.track.kind, []RTPTransceiverDirection{RTPTransceiverDirectionSendonly}),
		ssrc:   ssrc,
	}
	return nil
}

type PeerConnection struct{ api *API }

func (pc *PeerConnection) SetRemoteDescription(sdp string) error {
	return pc.api.mediaEngine.updateFromRemoteDescription(sdp)
}

func main() {
	me := &MediaEngine{
		videoCodecs: []RTPCodecParameters{{MimeType: "video/VP8", PayloadType: 96}},
		headerExtensions: []mediaEngineHeaderExtension{{
			uri: "urn:ietf:params:rtp-hdrext:sdes:mid", isVideo: true,
			allowedDirections: []RTPTransceiverDirection{RTPTransceiverDirectionSendonly},
		}},
		negotiatedHeaderExtensions: map[int]mediaEngineHeaderExtension{},
	}
	api := &API{mediaEngine: me}
	pc := &PeerConnection{api: api}
	sender := &RTPSender{id: "sender-1", track: &TrackLocal{kind: RTPCodecTypeVideo}, api: api}

	sent := make(chan error)
	go func() { sent <- sender.Send(1234) }()

	time.Sleep(10 * time.Millisecond)
	if err := pc.SetRemoteDescription("v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"); err != nil {
		panic(err)
	}
	fmt.Println("send:", <-sent, "codecs:", len(sender.context.params.Codecs))
}
