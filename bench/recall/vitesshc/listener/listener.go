// Package listener defines the health-stats listener interface used by
// vitess discovery and its consumers (gateways, buffer, the healthcheck
// cache itself).
package listener

// TabletStats is the latest health of one tablet.
type TabletStats struct {
	Alias   string
	Serving bool
	Lag     int
}

// StatsListener receives tablet health updates.
type StatsListener interface {
	StatsUpdate(ts TabletStats)
}

// Broadcast delivers ts to every listener in order.
func Broadcast(ls []StatsListener, ts TabletStats) {
	for _, l := range ls {
		l.StatsUpdate(ts)
	}
}
