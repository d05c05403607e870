// Project: prometheus/prometheus (notifier/notifier.go, v2.51.0)
// Issue: PR #13861 "Notifier: fix deadlock when zero alerts" (against
// release-2.51; the per-Alertmanager alert_relabel_configs were new in 2.51).
//
// Bug: Manager.sendAll read-locks each alertmanagerSet's ams.mtx (line 275)
// and, when the set has alert_relabel_configs that drop every alert of the
// batch, skips the set with `continue` without ams.mtx.RUnlock(): the read
// lock is leaked. The next time service discovery delivers Alertmanager
// targets, Manager.Run calls reload, which holds n.mtx and calls
// alertmanagerSet.sync, whose s.mtx.Lock() (line 380) waits forever for the
// leaked read lock. Run is the notifier's only goroutine, so alerts stop being
// sent, and every Send from the rule manager then blocks on n.mtx as well.
//
// Fix: unlock before continuing (and, added by the same PR, skip sets that
// have no discovered Alertmanagers before doing any work).
//
// main() feeds one alert that the set's relabel config drops, then two target
// updates; whichever order Run's select takes them in, the second reload
// reaches sync after the leak.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"regexp"
	"sort"
	"sync"
	"time"
)

// ---- model/labels, model/relabel, discovery/targetgroup ----

type Labels map[string]string

func (ls Labels) Get(name string) string { return ls[name] }

type Action string

const Drop Action = "drop"

// relabel.Config (only the drop action is modelled).
type Config struct {
	SourceLabels []string
	Regex        *regexp.Regexp
	Action       Action
}

// ProcessBuilder returns false if the label set is to be dropped.
func ProcessBuilder(lb Labels, cfgs ...*Config) (keep bool) {
	for _, cfg := range cfgs {
		val := ""
		for _, n := range cfg.SourceLabels {
			val += lb.Get(n)
		}
		if cfg.Action == Drop && cfg.Regex.MatchString(val) {
			return false
		}
	}
	return true
}

type Group struct {
	Targets []Labels
	Source  string
}

// ---- config ----

type AlertmanagerConfig struct {
	APIVersion          string
	Timeout             time.Duration
	AlertRelabelConfigs []*Config
}

// ---- notifier ----

// Alert is a generic representation of an alert in the Prometheus eco-system.
type Alert struct {
	Labels Labels `json:"labels"`
}

// Manager is responsible for dispatching alert notifications to an
// alert manager service.
type Manager struct {
	queue []*Alert
	opts  *Options

	more   chan struct{}
	mtx    sync.RWMutex
	ctx    context.Context
	cancel func()

	alertmanagers map[string]*alertmanagerSet
	droppedTotal  int // prometheus_notifications_dropped_total
}

// Options are the configurable parameters of a Handler.
type Options struct {
	QueueCapacity int
	// Used for sending HTTP requests to the Alertmanager.
	Do func(ctx context.Context, url string, payload []byte) error
}

// NewManager is the manager constructor.
func NewManager(o *Options) *Manager {
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		queue:  make([]*Alert, 0, o.QueueCapacity),
		ctx:    ctx,
		cancel: cancel,
		more:   make(chan struct{}, 1),
		opts:   o,
	}
}

// ApplyConfig updates the status state as the new config requires.
func (n *Manager) ApplyConfig(cfgs map[string]*AlertmanagerConfig) error {
	n.mtx.Lock()
	defer n.mtx.Unlock()

	amSets := make(map[string]*alertmanagerSet)
	for k, cfg := range cfgs {
		amSets[k] = &alertmanagerSet{cfg: cfg}
	}
	n.alertmanagers = amSets
	return nil
}

const maxBatchSize = 64

func (n *Manager) queueLen() int {
	n.mtx.RLock()
	defer n.mtx.RUnlock()

	return len(n.queue)
}

func (n *Manager) nextBatch() []*Alert {
	n.mtx.Lock()
	defer n.mtx.Unlock()

	var alerts []*Alert

	if len(n.queue) > maxBatchSize {
		alerts = append(make([]*Alert, 0, maxBatchSize), n.queue[:maxBatchSize]...)
		n.queue = n.queue[maxBatchSize:]
	} else {
		alerts = append(make([]*Alert, 0, len(n.queue)), n.queue...)
		n.queue = n.queue[:0]
	}

	return alerts
}

// Run dispatches notifications continuously.
func (n *Manager) Run(tsets <-chan map[string][]*Group) {
	for {
		// The select is split in two parts, such as we will first try to read
		// new alertmanager targets if they are available, before sending new
		// alerts.
		select {
		case <-n.ctx.Done():
			return
		case ts := <-tsets:
			n.reload(ts)
		default:
			select {
			case <-n.ctx.Done():
				return
			case ts := <-tsets:
				n.reload(ts)
			case <-n.more:
			}
		}
		alerts := n.nextBatch()

		if !n.sendAll(alerts...) {
			n.droppedTotal += len(alerts)
		}
		// If the queue still has items left, kick off the next iteration.
		if n.queueLen() > 0 {
			n.setMore()
		}
	}
}

func (n *Manager) reload(tgs map[string][]*Group) {
	n.mtx.Lock()
	defer n.mtx.Unlock()

	for id, tgroup := range tgs {
		am, ok := n.alertmanagers[id]
		if !ok {
			log.Printf("couldn't sync alert manager set: invalid id:%v", id)
			continue
		}
		am.sync(tgroup)
	}
}

// Send queues the given notification requests for processing.
func (n *Manager) Send(alerts ...*Alert) {
	n.mtx.Lock()
	defer n.mtx.Unlock()

	n.queue = append(n.queue, alerts...)

	// Notify sending goroutine that there are alerts to be processed.
	n.setMore()
}

func relabelAlerts(relabelConfigs []*Config, externalLabels Labels, alerts []*Alert) []*Alert {
	var relabeledAlerts []*Alert

	for _, a := range alerts {
		lb := Labels{}
		for k, v := range a.Labels {
			lb[k] = v
		}
		for k, v := range externalLabels {
			if a.Labels.Get(k) == "" {
				lb[k] = v
			}
		}
		keep := ProcessBuilder(lb, relabelConfigs...)
		if !keep {
			continue
		}
		a.Labels = lb
		relabeledAlerts = append(relabeledAlerts, a)
	}
	return relabeledAlerts
}

// setMore signals that the alert queue has items.
func (n *Manager) setMore() {
	// If we cannot send on the channel, it means the signal already exists
	// and has not been consumed yet.
	select {
	case n.more <- struct{}{}:
	default:
	}
}

// sendAll sends the alerts to all configured Alertmanagers concurrently.
// It returns true if the alerts could be sent successfully to at least one Alertmanager.
func (n *Manager) sendAll(alerts ...*Alert) bool {
	if len(alerts) == 0 {
		return true
	}

	// v1Payload and v2Payload represent 'alerts' marshaled for Alertmanager API
	// v1 or v2. Marshaling happens below. Reference here is for caching between
	// for loop iterations.
	var v1Payload, v2Payload []byte

	n.mtx.RLock()
	amSets := n.alertmanagers
	n.mtx.RUnlock()

	var (
		wg         sync.WaitGroup
		numSuccess int
		succMtx    sync.Mutex
	)
	for _, ams := range amSets {
		var (
			payload  []byte
			err      error
			amAlerts = alerts
		)

		ams.mtx.RLock()

		if len(ams.cfg.AlertRelabelConfigs) > 0 {
			amAlerts = relabelAlerts(ams.cfg.AlertRelabelConfigs, Labels{}, alerts)
			if len(amAlerts) == 0 {
				continue
			}
			// We can't use the cached values from previous iteration.
			v1Payload, v2Payload = nil, nil
		}

		switch ams.cfg.APIVersion {
		case "v1":
			if v1Payload == nil {
				v1Payload, err = json.Marshal(amAlerts)
				if err != nil {
					log.Printf("Encoding alerts for Alertmanager API v1 failed: %v", err)
					ams.mtx.RUnlock()
					return false
				}
			}
			payload = v1Payload
		case "v2":
			if v2Payload == nil {
				v2Payload, err = json.Marshal(amAlerts)
				if err != nil {
					log.Printf("Encoding alerts for Alertmanager API v2 failed: %v", err)
					ams.mtx.RUnlock()
					return false
				}
			}
			payload = v2Payload
		default:
			log.Printf("Invalid Alertmanager API version '%v'", ams.cfg.APIVersion)
			ams.mtx.RUnlock()
			return false
		}

		if len(ams.cfg.AlertRelabelConfigs) > 0 {
			// We can't use the cached values on the next iteration.
			v1Payload, v2Payload = nil, nil
		}

		for _, am := range ams.ams {
			wg.Add(1)

			ctx, cancel := context.WithTimeout(context.Background(), ams.cfg.Timeout)
			defer cancel()

			go func(ctx context.Context, url string, payload []byte) {
				if err := n.opts.Do(ctx, url, payload); err != nil {
					log.Printf("Error sending alert to %s: %v", url, err)
				} else {
					succMtx.Lock()
					numSuccess++
					succMtx.Unlock()
				}
				wg.Done()
			}(ctx, am.url(), payload)
		}

		ams.mtx.RUnlock()
	}

	wg.Wait()

	return numSuccess > 0
}

// Stop shuts down the notification handler.
func (n *Manager) Stop() {
	n.cancel()
}

// Alertmanager holds Alertmanager endpoint information.
type alertmanager interface {
	url() string
}

type alertmanagerLabels struct{ Labels }

func (a alertmanagerLabels) url() string {
	return "http://" + a.Get("__address__") + "/api/v2/alerts"
}

// alertmanagerSet contains a set of Alertmanagers discovered via a group of service
// discovery definitions that have a common configuration on how alerts should be sent.
type alertmanagerSet struct {
	cfg *AlertmanagerConfig

	mtx        sync.RWMutex
	ams        []alertmanager
	droppedAms []alertmanager
}

// sync extracts a deduplicated set of Alertmanager endpoints from a list
// of target groups definitions.
func (s *alertmanagerSet) sync(tgs []*Group) {
	allAms := []alertmanager{}
	for _, tg := range tgs {
		for _, t := range tg.Targets {
			allAms = append(allAms, alertmanagerLabels{t})
		}
	}

	s.mtx.Lock()
	defer s.mtx.Unlock()
	// Set new Alertmanagers and deduplicate them along their unique URL.
	s.ams = []alertmanager{}
	seen := map[string]struct{}{}
	for _, am := range allAms {
		us := am.url()
		if _, ok := seen[us]; ok {
			continue
		}
		seen[us] = struct{}{}
		s.ams = append(s.ams, am)
	}
	sort.Slice(s.ams, func(i, j int) bool { return s.ams[i].url() < s.ams[j].url() })
}

func main() {
	n := NewManager(&Options{QueueCapacity: 10000, Do: func(ctx context.Context, url string, payload []byte) error {
		return nil
	}})
	// alerting:
	//   alertmanagers:
	//   - api_version: v2
	//     alert_relabel_configs:
	//     - source_labels: [severity]
	//       regex: info
	//       action: drop
	_ = n.ApplyConfig(map[string]*AlertmanagerConfig{
		"config-0": {APIVersion: "v2", Timeout: 10 * time.Second, AlertRelabelConfigs: []*Config{
			{SourceLabels: []string{"severity"}, Regex: regexp.MustCompile("^(?:info)$"), Action: Drop},
		}},
	})

	tsets := make(chan map[string][]*Group)
	done := make(chan struct{})
	go func() {
		n.Run(tsets)
		close(done)
	}()
	update := func(addr string) map[string][]*Group {
		return map[string][]*Group{"config-0": {{Source: "0", Targets: []Labels{{"__address__": addr}}}}}
	}
	tsets <- update("am-0:9093")

	// The rule manager sends an alert that the relabel config drops.
	n.Send(&Alert{Labels: Labels{"alertname": "Watchdog", "severity": "info"}})

	// Alertmanager discovery keeps delivering targets.
	tsets <- update("am-1:9093")
	tsets <- update("am-2:9093")

	n.Stop()
	<-done
	fmt.Println("done")
}
