// vitess go/vt/discovery: the healthcheck held its RWMutex for reading while
// recomputing serving state and broadcast the changes to its listeners; one
// of those listeners is the healthcheck's own cache updater, which takes the
// same mutex for writing -> a read-to-write upgrade that blocks forever.
// Fixed by collecting the updates under the read lock and broadcasting after
// releasing it.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/vitesshc/discovery"
	"example.com/recall/vitesshc/listener"
)

type gatewayLog struct{}

func (gatewayLog) StatsUpdate(ts listener.TabletStats) {
	fmt.Println("gateway: tablet", ts.Alias, "serving =", ts.Serving)
}

func main() {
	hc := discovery.New()
	hc.AddListener(gatewayLog{})
	hc.StatsUpdate(listener.TabletStats{Alias: "zone1-100", Serving: true, Lag: 1})
	hc.StatsUpdate(listener.TabletStats{Alias: "zone1-101", Serving: true, Lag: 45})

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fmt.Println("flipped:", hc.RecheckServing(30))
	}()
	wg.Wait()
	fmt.Println("serving:", hc.Serving())
}
