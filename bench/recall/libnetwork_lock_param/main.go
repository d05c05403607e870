// Modeled on moby/libnetwork's overlay driver, where network sandbox setup
// helpers took flag parameters deciding whether to take n.Lock() themselves
// (initSandbox / initSubnetSandbox called from joinSandbox and from restore).
// A call site that already held n.Lock() passed lock=true and self-deadlocked
// the first time a container joined the network.
package main

import (
	"fmt"
	"sync"
	"time"
)

type subnet struct {
	vni      uint32
	brName   string
	sboxInit bool
}

type network struct {
	sync.Mutex
	id       string
	subnets  []*subnet
	joinCnt  int
	sboxInit bool
}

func (n *network) initSandbox(restore bool, lock bool) error {
	if lock {
		n.Lock()
		defer n.Unlock()
	}
	if n.sboxInit {
		return nil
	}
	for _, s := range n.subnets {
		s.brName = fmt.Sprintf("ov-%06x-%s", s.vni, n.id[:5])
		s.sboxInit = !restore || s.sboxInit
	}
	n.sboxInit = true
	return nil
}

func (n *network) joinSandbox(restore bool) error {
	n.Lock()
	defer n.Unlock()
	n.joinCnt++
	if n.joinCnt == 1 {
		return n.initSandbox(restore, true)
	}
	return nil
}

func (n *network) leaveSandbox() {
	n.Lock()
	defer n.Unlock()
	n.joinCnt--
}

type driver struct{ networks map[string]*network }

func (d *driver) restoreNetwork(id string) error {
	return d.networks[id].initSandbox(true, true)
}

func main() {
	n := &network{id: "3f1c9a7be2d4", subnets: []*subnet{{vni: 4097}}}
	d := &driver{networks: map[string]*network{n.id: n}}
	go func() { _ = d.restoreNetwork(n.id) }()
	go func() { // container join on the overlay network
		if err := n.joinSandbox(false); err == nil {
			n.leaveSandbox()
		}
	}()
	time.Sleep(50 * time.Millisecond)
}
