// Project: grpc/grpc-go, the generic xDS client (xds/internal/clients/xdsclient), mid-2025.
// Files/functions: xdsclient.go (XDSClient.channelsMu, channelState.adsResourceRemoveUnsubscribedCacheEntries,
// resourceWatchStateForTesting), channel.go (xdsChannel.onRequest), ads_stream.go (adsStreamImpl.send,
// sendNew, sendMessageIfWritePendingLocked, sendMessageLocked, adsResourceWatchStateForTesting).
// Issue grpc/grpc-go#8477 "Flaky test: Test/ADS_WatchState_StreamBreaks", fixed by PR #8499
// "xdsclient: modify how the resource watch state is retrieved for testing".
//
// resourceWatchStateForTesting took the client's channelsMu and, for every active channel,
// asked the channel's ADS stream for the watch state, which takes adsStreamImpl.mu. The ADS
// stream's send goroutine does the opposite: it sends discovery requests with adsStreamImpl.mu
// held, and sendMessageLocked notifies its event handler (the xdsChannel) through onRequest,
// which forwards to the xdsChannelEventHandler implemented by channelState, whose
// adsResourceRemoveUnsubscribedCacheEntries takes the parent client's channelsMu. The two
// goroutines take the two mutexes in opposite orders and wedge. The fix stops taking channelsMu:
// the watch state is looked up through the authority that owns the resource, which asks its
// active channel's ADS stream directly.
package main

import (
	"fmt"
	"sync"
	"time"
)

type (
	ResourceType       struct{ TypeURL, TypeName string }
	ServerConfig       struct{ ServerURI string }
	ResourceWatchState struct{ State string }
)

type resourceTypeState struct {
	version, nonce      string
	subscribedResources map[string]*ResourceWatchState
	pendingWrite        bool
}

type fakeStream struct{}

// Send simulates writing the request on the wire to the management server.
func (fakeStream) Send(msg string) error { time.Sleep(200 * time.Millisecond); return nil }

type adsStreamEventHandler interface {
	onRequest(typeURL string)
}

type adsStreamImpl struct {
	eventHandler adsStreamEventHandler
	requestCh    chan ResourceType
	stream       fakeStream

	mu                sync.Mutex
	resourceTypeState map[ResourceType]*resourceTypeState
	firstRequest      bool
}

func (s *adsStreamImpl) subscribe(typ ResourceType, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	state, ok := s.resourceTypeState[typ]
	if !ok {
		state = &resourceTypeState{subscribedResources: make(map[string]*ResourceWatchState)}
		s.resourceTypeState[typ] = state
	}
	state.subscribedResources[name] = &ResourceWatchState{State: "started"}
	state.pendingWrite = true
	s.requestCh <- typ
}

func (s *adsStreamImpl) send() {
	for typ := range s.requestCh {
		_ = s.sendNew(s.stream, typ)
	}
}

func (s *adsStreamImpl) sendNew(stream fakeStream, typ ResourceType) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendMessageIfWritePendingLocked(stream, typ, s.resourceTypeState[typ])
}

func (s *adsStreamImpl) sendMessageIfWritePendingLocked(stream fakeStream, typ ResourceType, state *resourceTypeState) error {
	if !state.pendingWrite {
		return nil
	}
	var names []string
	for n := range state.subscribedResources {
		names = append(names, n)
	}
	if err := s.sendMessageLocked(stream, names, typ.TypeURL, state.version, state.nonce); err != nil {
		return err
	}
	state.pendingWrite = false
	return nil
}

// Caller needs to hold s.mu.
func (s *adsStreamImpl) sendMessageLocked(stream fakeStream, names []string, url, version, nonce string) error {
	req := fmt.Sprintf("DiscoveryRequest{type=%s names=%v version=%q nonce=%q first=%v}", url, names, version, nonce, s.firstRequest)
	if err := stream.Send(req); err != nil {
		return err
	}
	s.firstRequest = false
	s.eventHandler.onRequest(url)
	return nil
}

func (s *adsStreamImpl) adsResourceWatchStateForTesting(rType ResourceType, resourceName string) (ResourceWatchState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state, ok := s.resourceTypeState[rType]; ok {
		if rs, ok := state.subscribedResources[resourceName]; ok {
			return *rs, nil
		}
	}
	return ResourceWatchState{}, fmt.Errorf("unknown resource %v %q", rType, resourceName)
}

type xdsChannelEventHandler interface {
	adsResourceRemoveUnsubscribedCacheEntries(ResourceType)
}

type xdsChannel struct {
	ads           *adsStreamImpl
	resourceTypes map[string]ResourceType
	eventHandler  xdsChannelEventHandler
}

func (xc *xdsChannel) onRequest(typeURL string) {
	rType, ok := xc.resourceTypes[typeURL]
	if !ok {
		return
	}
	xc.eventHandler.adsResourceRemoveUnsubscribedCacheEntries(rType)
}

type authority struct{ name string }

func (a *authority) removeUnsubscribedCacheEntries(rType ResourceType) {}

type channelState struct {
	parent                *XDSClient
	channel               *xdsChannel
	interestedAuthorities map[*authority]bool
}

func (cs *channelState) adsResourceRemoveUnsubscribedCacheEntries(rType ResourceType) {
	cs.parent.channelsMu.Lock()
	defer cs.parent.channelsMu.Unlock()
	for a := range cs.interestedAuthorities {
		a.removeUnsubscribedCacheEntries(rType)
	}
}

type XDSClient struct {
	channelsMu        sync.Mutex
	xdsActiveChannels map[ServerConfig]*channelState
}

func resourceWatchStateForTesting(c *XDSClient, rType ResourceType, resourceName string) (ResourceWatchState, error) {
	c.channelsMu.Lock()
	defer c.channelsMu.Unlock()
	for _, state := range c.xdsActiveChannels {
		if st, err := state.channel.ads.adsResourceWatchStateForTesting(rType, resourceName); err == nil {
			return st, nil
		}
	}
	return ResourceWatchState{}, fmt.Errorf("unable to find watch state for %q", resourceName)
}

func main() {
	listenerType := ResourceType{TypeURL: "type.googleapis.com/envoy.config.listener.v3.Listener", TypeName: "ListenerResource"}
	c := &XDSClient{xdsActiveChannels: make(map[ServerConfig]*channelState)}
	state := &channelState{parent: c, interestedAuthorities: map[*authority]bool{{name: ""}: true}}
	xc := &xdsChannel{resourceTypes: map[string]ResourceType{listenerType.TypeURL: listenerType}, eventHandler: state}
	xc.ads = &adsStreamImpl{eventHandler: xc, requestCh: make(chan ResourceType, 8), resourceTypeState: make(map[ResourceType]*resourceTypeState), firstRequest: true}
	state.channel = xc
	c.xdsActiveChannels[ServerConfig{ServerURI: "xds-server:443"}] = state
	go xc.ads.send()

	xc.ads.subscribe(listenerType, "listener-a")
	time.Sleep(50 * time.Millisecond) // the ADS send goroutine is writing the request under ads.mu

	st, err := resourceWatchStateForTesting(c, listenerType, "listener-a")
	fmt.Println("watch state:", st.State, err)
}
