package consumer

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// status is what the status endpoint shows.
type status struct {
	Stats
	Inflight int  `json:"inflight"`
	Paused   bool `json:"paused"`
}

// ServeHTTP reports progress; it runs on the HTTP server's goroutines.
// Counters come from under the stats lock, control's state from control.
func (c *Consumer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var st status
	c.statsMu.RLock()
	st.Stats = c.stats
	c.statsMu.RUnlock()
	ctx, cancel := context.WithTimeout(r.Context(), time.Second)
	defer cancel()
	if err := c.ask(ctx, func() { st.Inflight, st.Paused = c.inflight, c.paused }); err != nil {
		http.Error(w, "control loop busy", http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodPost && r.URL.Query().Get("pause") != "" {
		_ = c.ask(ctx, c.Pause)
	}
	_ = json.NewEncoder(w).Encode(st)
}

// Snapshot returns the counters; safe from any goroutine.
func (c *Consumer) Snapshot() Stats {
	c.statsMu.RLock()
	defer c.statsMu.RUnlock()
	return c.stats
}
