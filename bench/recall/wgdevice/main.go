// wireguard-go device: RemovePeer held device.peers (write) across peer.Stop,
// which waits for the peer's receive routines; a routine mid-packet needed
// device.peers (read) for the allowed-IPs lookup, so Stop never returned.
// Fixed by stopping the peer after dropping the device lock.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/wgdevice/device"
)

func main() {
	d := device.New()
	p := d.NewPeer("peerA", []string{"10.0.0.2/32"})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // UDP receive path
		defer wg.Done()
		for i := 0; i < 10000; i++ {
			p.Deliver([]byte{0x45, byte(i)})
		}
	}()
	d.RemovePeer("peerA") // uapi "remove=true"
	wg.Wait()
	fmt.Println("peer removed")
}
