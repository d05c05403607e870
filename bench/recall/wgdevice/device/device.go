// Package device is a cut-down wireguard-go Device.
package device

import (
	"sync"

	"example.com/recall/wgdevice/peer"
)

type Device struct {
	peers struct {
		sync.RWMutex // also guards allowedips
		keyMap       map[string]*peer.Peer
	}
	allowedips map[string][]string
}

func New() *Device {
	d := &Device{allowedips: make(map[string][]string)}
	d.peers.keyMap = make(map[string]*peer.Peer)
	return d
}

func (d *Device) NewPeer(key string, ips []string) *peer.Peer {
	d.peers.Lock()
	defer d.peers.Unlock()
	p := peer.New(key, d)
	d.peers.keyMap[key] = p
	d.allowedips[key] = ips
	p.Start(2)
	return p
}

func (d *Device) AllowedIPsFor(key string) []string {
	d.peers.RLock()
	defer d.peers.RUnlock()
	return d.allowedips[key]
}

func (d *Device) RemovePeer(key string) {
	d.peers.Lock()
	defer d.peers.Unlock()
	if p, ok := d.peers.keyMap[key]; ok {
		delete(d.peers.keyMap, key)
		delete(d.allowedips, key)
		p.Stop()
	}
}
