// Project: tailscale/wireguard-go (device/noise-protocol.go ConsumeMessageInitiation, device/device.go LookupPeer/SetPrivateKey, device/peer.go NewPeer), tailscale fork with lazily created peers, April 2026.
// Bug: ConsumeMessageInitiation held device.staticIdentity.RLock for the whole call, and for an unknown sender it calls LookupPeer, whose PeerLookupFunc path creates the peer with NewPeer, which read-locks staticIdentity again. A SetPrivateKey that arrives in between queues staticIdentity.Lock behind the first reader, so the reentrant RLock blocks behind the pending writer and the handshake worker and the key rotation wait forever (fix 770e3f59, PR #55: snapshot the static identity under a short RLock and release it before LookupPeer).
package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"
)

type NoisePublicKey [32]byte
type NoisePrivateKey [32]byte

func (sk NoisePrivateKey) publicKey() NoisePublicKey { return sha256.Sum256(sk[:]) }

func (sk NoisePrivateKey) sharedSecret(pk NoisePublicKey) [32]byte {
	return sha256.Sum256(append(sk[:], pk[:]...))
}

type NewPeerConfig struct{ AllowedIPs []string }

// PeerLookupFunc is installed by tailscale's wgcfg so that peers are created
// on demand when a handshake from a not yet configured peer arrives.
type PeerLookupFunc func(pk NoisePublicKey) (*NewPeerConfig, bool)

type Handshake struct {
	mutex                   sync.RWMutex
	remoteStatic            NoisePublicKey
	precomputedStaticStatic [32]byte
	state                   int
}

type Peer struct {
	device       *Device
	handshake    Handshake
	deleteOnIdle bool
	allowedIPs   []string
}

type Device struct {
	staticIdentity struct {
		sync.RWMutex
		privateKey NoisePrivateKey
		publicKey  NoisePublicKey
	}
	peers struct {
		sync.RWMutex
		keyMap     map[NoisePublicKey]*Peer
		lookupFunc PeerLookupFunc
	}
}

type MessageInitiation struct {
	Sender uint32
	Static NoisePublicKey // already decrypted, the real code opens it with the DH key
}

var errAddExistingPeer = errors.New("adding existing peer")

func (device *Device) NewPeer(pk NoisePublicKey) (*Peer, error) {
	device.staticIdentity.RLock()
	defer device.staticIdentity.RUnlock()
	device.peers.Lock()
	defer device.peers.Unlock()
	if _, ok := device.peers.keyMap[pk]; ok {
		return nil, errAddExistingPeer
	}
	peer := &Peer{device: device}
	peer.handshake.remoteStatic = pk
	peer.handshake.precomputedStaticStatic = device.staticIdentity.privateKey.sharedSecret(pk)
	device.peers.keyMap[pk] = peer
	return peer, nil
}

func (device *Device) LookupPeer(pk NoisePublicKey) *Peer {
	device.peers.RLock()
	p, ok := device.peers.keyMap[pk]
	lookupFunc := device.peers.lookupFunc
	device.peers.RUnlock()
	if ok || lookupFunc == nil {
		return p
	}
	conf, ok := lookupFunc(pk)
	if !ok || conf == nil {
		return nil
	}
	p, err := device.NewPeer(pk)
	if err != nil {
		return nil
	}
	p.allowedIPs = conf.AllowedIPs
	p.deleteOnIdle = true
	return p
}

func (device *Device) SetPrivateKey(sk NoisePrivateKey) error {
	device.staticIdentity.Lock()
	defer device.staticIdentity.Unlock()
	device.peers.Lock()
	defer device.peers.Unlock()
	device.staticIdentity.privateKey = sk
	device.staticIdentity.publicKey = sk.publicKey()
	for _, peer := range device.peers.keyMap {
		peer.handshake.mutex.Lock()
		peer.handshake.precomputedStaticStatic = sk.sharedSecret(peer.handshake.remoteStatic)
		peer.handshake.mutex.Unlock()
	}
	return nil
}

func (device *Device) ConsumeMessageInitiation(msg *MessageInitiation) *Peer {
	// Snapshot staticIdentity so the RLock is not held across LookupPeer,
	// which may call NewPeer (reentrant RLock against a pending writer).
	device.staticIdentity.RLock()
	privateKey := device.staticIdentity.privateKey
	device.staticIdentity.RUnlock()
	_ = privateKey.sharedSecret(msg.Static) // mix ephemeral and static keys

	peer := device.LookupPeer(msg.Static)
	if peer == nil {
		return nil
	}
	peer.handshake.mutex.Lock()
	peer.handshake.state = 1 // handshakeInitiationConsumed
	peer.handshake.mutex.Unlock()
	return peer
}

// RoutineHandshake is one of the device's handshake workers.
func (device *Device) RoutineHandshake(queue <-chan *MessageInitiation, wg *sync.WaitGroup) {
	defer wg.Done()
	for msg := range queue {
		if peer := device.ConsumeMessageInitiation(msg); peer != nil {
			fmt.Println("handshake consumed from lazily created peer")
		}
	}
}

func main() {
	device := &Device{}
	device.peers.keyMap = make(map[NoisePublicKey]*Peer)
	device.SetPrivateKey(NoisePrivateKey{1})
	device.peers.lookupFunc = func(pk NoisePublicKey) (*NewPeerConfig, bool) {
		time.Sleep(100 * time.Millisecond) // netmap lookup in tailscale's wgcfg
		return &NewPeerConfig{AllowedIPs: []string{"100.64.0.2/32"}}, true
	}

	var wg sync.WaitGroup
	queue := make(chan *MessageInitiation, 1)
	wg.Add(2)
	go device.RoutineHandshake(queue, &wg)
	queue <- &MessageInitiation{Sender: 7, Static: NoisePrivateKey{2}.publicKey()}
	close(queue)

	time.Sleep(20 * time.Millisecond)
	go func() { // node key rotation from the control plane
		defer wg.Done()
		device.SetPrivateKey(NoisePrivateKey{3})
		fmt.Println("private key rotated")
	}()
	wg.Wait()
}
