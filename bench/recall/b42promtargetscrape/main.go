// Project: prometheus/prometheus, master between 0.17.0 and 0.18.0
// (February 2016, after PR #1385 "Cleanup target internals").
// Files/functions: retrieval/target.go (Target.RunScraper, Target.scrape,
// Target.wrapAppender, Target.Labels, Target.StopScraper),
// retrieval/targetmanager.go (targetSet.update stopping replaced targets).
// Fix: PR #1432 "Fix a deadlock".
//
// Target.scrape read-locks the target (its embedded sync.RWMutex) to build
// the appender chain and to pick the HTTP client. wrapAppender, called under
// that read lock, asks t.Labels() for the label set of the
// ruleLabelsAppender/honorLabelsAppender, and Labels read-locks the target
// again. When service discovery replaces the target at that moment, the
// target manager calls StopScraper, which write-locks the target to clear
// its running flag; the writer waits for scrape's read lock, and Labels'
// read lock waits behind the writer. The scraper and the target manager's
// update both hang, and with them every later target update. The fix takes
// only the HTTP client under the read lock and builds the appenders after
// releasing it.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type LabelName string
type LabelSet map[LabelName]string

const (
	AddressLabel        LabelName = "__address__"
	InstanceLabel       LabelName = "instance"
	ReservedLabelPrefix           = "__"
)

type Sample struct{ Metric LabelSet }

type SampleAppender interface{ Append(*Sample) error }

type ScrapeConfig struct{ HonorLabels bool }

type ruleLabelsAppender struct {
	SampleAppender
	labels LabelSet
}

func (app ruleLabelsAppender) Append(s *Sample) error {
	for ln, lv := range app.labels {
		s.Metric[ln] = lv
	}
	return app.SampleAppender.Append(s)
}

type honorLabelsAppender struct {
	SampleAppender
	labels LabelSet
}

func (app honorLabelsAppender) Append(s *Sample) error {
	for ln, lv := range app.labels {
		if _, ok := s.Metric[ln]; !ok {
			s.Metric[ln] = lv
		}
	}
	return app.SampleAppender.Append(s)
}

type httpClient struct{}

func (httpClient) scrape(string) []*Sample {
	return []*Sample{{Metric: LabelSet{"__name__": "up"}}}
}

// Target refers to a singular HTTP or HTTPS endpoint.
type Target struct {
	scraperStopping chan struct{}
	scraperStopped  chan struct{}
	running         bool

	// Mutex protects the members below.
	sync.RWMutex

	scrapeConfig *ScrapeConfig
	labels       LabelSet
	httpClient   *httpClient
}

// Labels returns a copy of the set of all public labels of the target.
func (t *Target) Labels() LabelSet {
	t.RLock()
	defer t.RUnlock()
	lset := make(LabelSet, len(t.labels))
	for ln, lv := range t.labels {
		if !strings.HasPrefix(string(ln), ReservedLabelPrefix) {
			lset[ln] = lv
		}
	}
	if _, ok := lset[InstanceLabel]; !ok {
		lset[InstanceLabel] = t.labels[AddressLabel]
	}
	return lset
}

// wrapAppender wraps a SampleAppender for samples ingested from the target.
func (t *Target) wrapAppender(app SampleAppender) SampleAppender {
	if t.scrapeConfig.HonorLabels {
		return honorLabelsAppender{SampleAppender: app, labels: t.Labels()}
	}
	return ruleLabelsAppender{SampleAppender: app, labels: t.Labels()}
}

func (t *Target) scrape(appender SampleAppender) error {
	t.RLock()
	time.Sleep(50 * time.Millisecond) // the scraper is descheduled here
	appender = t.wrapAppender(appender)
	client := t.httpClient
	addr := string(t.labels[AddressLabel])
	t.RUnlock()

	for _, s := range client.scrape(addr) {
		if err := appender.Append(s); err != nil {
			return err
		}
	}
	return nil
}

// RunScraper implements Target.
func (t *Target) RunScraper(sampleAppender SampleAppender) {
	defer close(t.scraperStopped)
	t.Lock()
	t.running = true
	t.Unlock()
	t.scrape(sampleAppender)
	<-t.scraperStopping
}

// StopScraper implements Target.
func (t *Target) StopScraper() {
	t.Lock()
	if !t.running {
		t.Unlock()
		return
	}
	t.running = false
	t.Unlock()
	close(t.scraperStopping)
	<-t.scraperStopped
}

// targetSet is the per-job set of targets of the TargetManager.
type targetSet struct {
	mtx     sync.RWMutex
	targets map[string]*Target
}

// update replaces the targets from a target group; replaced targets are
// stopped.
func (ts *targetSet) update(name string, next map[string]*Target) {
	ts.mtx.Lock()
	defer ts.mtx.Unlock()
	var wg sync.WaitGroup
	for k, t := range ts.targets {
		if _, ok := next[k]; !ok {
			wg.Add(1)
			go func(t *Target) {
				t.StopScraper()
				wg.Done()
			}(t)
		}
	}
	wg.Wait()
	ts.targets = next
}

type storage struct{}

func (storage) Append(s *Sample) error {
	fmt.Println("append", s.Metric)
	return nil
}

func main() {
	t := &Target{
		scraperStopping: make(chan struct{}),
		scraperStopped:  make(chan struct{}),
		scrapeConfig:    &ScrapeConfig{},
		labels:          LabelSet{AddressLabel: "10.0.0.1:9100", "job": "node"},
		httpClient:      &httpClient{},
	}
	ts := &targetSet{targets: map[string]*Target{"10.0.0.1:9100": t}}

	go t.RunScraper(storage{})
	time.Sleep(20 * time.Millisecond)
	ts.update("node", map[string]*Target{}) // service discovery drops the target
	fmt.Println("updated")
}
