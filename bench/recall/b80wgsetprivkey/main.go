// Project: WireGuard/wireguard-go (device/device.go SetPrivateKey, device/peer.go Stop / ZeroAndFlushAll), 2019-2021 (approximate).
// Bug: SetPrivateKey read-locks every peer's handshake.mutex (the lockedPeers list) and then removes any peer whose
// public key equals the new local public key via removePeerLocked; that stops the peer, and ZeroAndFlushAll takes
// handshake.mutex for writing while this goroutine still holds the read lock, so the UAPI set hangs forever; the fix
// drops the peer's read lock around removePeerLocked.
package main

import (
	"crypto/ecdh"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

type NoisePrivateKey [32]byte
type NoisePublicKey [32]byte

func (sk NoisePrivateKey) publicKey() (pk NoisePublicKey) {
	k, err := ecdh.X25519().NewPrivateKey(sk[:])
	if err != nil {
		panic(err)
	}
	copy(pk[:], k.PublicKey().Bytes())
	return pk
}

func (sk NoisePrivateKey) Equals(o NoisePrivateKey) bool { return sk == o }
func (pk NoisePublicKey) Equals(o NoisePublicKey) bool   { return pk == o }

type Keypair struct{ localIndex uint32 }

type Keypairs struct {
	sync.RWMutex
	current  *Keypair
	previous *Keypair
	next     atomic.Pointer[Keypair]
}

type Handshake struct {
	mutex                   sync.RWMutex
	remoteStatic            NoisePublicKey
	precomputedStaticStatic [32]byte
	localIndex              uint32
}

func (h *Handshake) Clear() { h.localIndex = 0 }

type IndexTable struct {
	sync.RWMutex
	table map[uint32]*Peer
}

func (t *IndexTable) Delete(index uint32) {
	t.Lock()
	defer t.Unlock()
	delete(t.table, index)
}

type Peer struct {
	isRunning atomic.Bool
	keypairs  Keypairs
	handshake Handshake
	device    *Device
	state     struct{ sync.Mutex }
	stopping  sync.WaitGroup
}

type Device struct {
	staticIdentity struct {
		sync.RWMutex
		privateKey NoisePrivateKey
		publicKey  NoisePublicKey
	}
	peers struct {
		sync.RWMutex
		keyMap map[NoisePublicKey]*Peer
	}
	indexTable IndexTable
}

func (device *Device) DeleteKeypair(key *Keypair) {
	if key != nil {
		device.indexTable.Delete(key.localIndex)
	}
}

func (peer *Peer) ZeroAndFlushAll() {
	device := peer.device
	// clear key pairs
	keypairs := &peer.keypairs
	keypairs.Lock()
	device.DeleteKeypair(keypairs.previous)
	device.DeleteKeypair(keypairs.current)
	device.DeleteKeypair(keypairs.next.Load())
	keypairs.previous, keypairs.current = nil, nil
	keypairs.next.Store(nil)
	keypairs.Unlock()
	// clear handshake state
	handshake := &peer.handshake
	handshake.mutex.Lock()
	device.indexTable.Delete(handshake.localIndex)
	handshake.Clear()
	handshake.mutex.Unlock()
}

func (peer *Peer) Stop() {
	peer.state.Lock()
	defer peer.state.Unlock()
	if !peer.isRunning.Swap(false) {
		return
	}
	peer.stopping.Wait()
	peer.ZeroAndFlushAll()
}

func removePeerLocked(device *Device, peer *Peer, key NoisePublicKey) {
	// stop routing and processing of packets
	peer.Stop()
	// remove from peer map
	delete(device.peers.keyMap, key)
}

// SetPrivateKey (buggy): removePeerLocked runs while this goroutine read-holds the peer's handshake.mutex.
func (device *Device) SetPrivateKey(sk NoisePrivateKey) error {
	device.staticIdentity.Lock()
	defer device.staticIdentity.Unlock()
	if sk.Equals(device.staticIdentity.privateKey) {
		return nil
	}
	device.peers.Lock()
	defer device.peers.Unlock()

	lockedPeers := make([]*Peer, 0, len(device.peers.keyMap))
	for _, peer := range device.peers.keyMap {
		peer.handshake.mutex.RLock()
		lockedPeers = append(lockedPeers, peer)
	}

	// remove peers with matching public keys
	publicKey := sk.publicKey()
	for key, peer := range device.peers.keyMap {
		if peer.handshake.remoteStatic.Equals(publicKey) {
			removePeerLocked(device, peer, key)
		}
	}

	// update key material
	device.staticIdentity.privateKey = sk
	device.staticIdentity.publicKey = publicKey

	for _, peer := range device.peers.keyMap {
		peer.handshake.precomputedStaticStatic = [32]byte(publicKey)
	}
	for _, peer := range lockedPeers {
		peer.handshake.mutex.RUnlock()
	}
	return nil
}

func (device *Device) NewPeer(pk NoisePublicKey) *Peer {
	device.peers.Lock()
	defer device.peers.Unlock()
	peer := &Peer{device: device}
	peer.handshake.remoteStatic = pk
	peer.isRunning.Store(true)
	device.peers.keyMap[pk] = peer
	return peer
}

// IpcSet handles a UAPI "set=1" operation (only the private_key line here).
func (device *Device) IpcSet(uapiConf string, sk NoisePrivateKey) error {
	for _, line := range strings.Split(uapiConf, "\n") {
		if strings.HasPrefix(line, "private_key=") {
			if err := device.SetPrivateKey(sk); err != nil {
				return err
			}
		}
	}
	return nil
}

func main() {
	device := &Device{}
	device.peers.keyMap = map[NoisePublicKey]*Peer{}
	device.indexTable.table = map[uint32]*Peer{}
	var sk NoisePrivateKey
	sk[0] = 0x40
	var other NoisePrivateKey
	other[0] = 0x48
	device.NewPeer(other.publicKey())
	device.NewPeer(sk.publicKey()) // a peer entry carrying our own future public key

	if err := device.IpcSet("private_key=4000000000000000000000000000000000000000000000000000000000000000", sk); err != nil {
		fmt.Println("IpcSet:", err)
	}
	fmt.Println("peers:", len(device.peers.keyMap))
}
