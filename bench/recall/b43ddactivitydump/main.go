// Project: DataDog/datadog-agent, Cloud Workload Security (runtime security for
// containers, system-probe), 7.52/7.53, early 2024.
// Files: pkg/security/security_profile/dump/manager.go (ActivityDumpManager.
// resolveTags, resolveTagsPerAd, RemoveDump, SendStats) and activity_dump.go
// (ActivityDump.resolveTags, finalize, SendStats).
// PR: DataDog/datadog-agent#24464 "[CWS] fix deadlock when calling RemoveDump
// from a function where ad is already locked" (Apr 2024; #24459 was abandoned).
//
// The activity dump manager (adm, embedded RWMutex) owns the active dumps; each
// dump (ad, embedded Mutex) points back to its manager. The tags ticker runs
// resolveTags: resolveTagsPerAd locks the dump, asks the tagger for the
// container tags and, when the workload is on the deny list (or over the
// per-workload limit), finalizes the dump and calls adm.RemoveDump, which locks
// the manager: ad -> adm. The stats ticker runs adm.SendStats, which locks the
// manager and calls ad.SendStats on every active dump, which locks the dump:
// adm -> ad. When both run on the same dump each holds the lock the other
// wants, and the event goroutine that needs either lock stalls with them. The
// fix keeps the adm -> ad order only: resolveTagsPerAd just moves the dump to
// Stopped, and a cleanup step removes stopped dumps under the manager lock.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type ActivityDumpStatus int

const Stopped ActivityDumpStatus = 2

// StatsdClient is the subset of statsd.ClientInterface used here.
type StatsdClient interface {
	Count(string, int64, []string, float64) error
}

type stdoutStatsd struct{}

func (stdoutStatsd) Count(name string, v int64, tags []string, rate float64) error {
	_, err := fmt.Println("count", name, v, tags)
	return err
}

// TagsResolver asks the agent's tagger for the tags of a container.
type TagsResolver interface {
	ResolveWithErr(id string) ([]string, error)
}

type remoteTagger struct{}

func (remoteTagger) ResolveWithErr(id string) ([]string, error) {
	time.Sleep(50 * time.Millisecond) // gRPC round trip to the core agent's tagger
	return []string{"image_name:nginx", "image_tag:1.25"}, nil
}

type WorkloadSelector struct{ Image, Tag string }

type ActivityDump struct {
	sync.Mutex
	adm               *ActivityDumpManager
	ContainerID       string
	Tags              []string
	state             ActivityDumpStatus
	addedRuntimeCount map[string]int64
}

func (ad *ActivityDump) resolveTags() error {
	if len(ad.Tags) > 0 {
		return nil
	}
	tags, err := ad.adm.tagsResolvers.ResolveWithErr(ad.ContainerID)
	ad.Tags = tags
	return err
}

func (ad *ActivityDump) getWorkloadSelector() *WorkloadSelector {
	var sel WorkloadSelector
	for _, t := range ad.Tags {
		k, v, _ := strings.Cut(t, ":")
		if k == "image_name" {
			sel.Image = v
		} else if k == "image_tag" {
			sel.Tag = v
		}
	}
	if sel.Image == "" {
		return nil
	}
	return &sel
}

// finalize is called with ad locked.
func (ad *ActivityDump) finalize(releaseTracedCgroupSpot bool) {
	ad.state = Stopped
}

// SendStats sends activity dump stats
func (ad *ActivityDump) SendStats() error {
	ad.Lock()
	defer ad.Unlock()
	for evtType, count := range ad.addedRuntimeCount {
		if err := ad.adm.statsdClient.Count("datadog.runtime_security.activity_dump.event.added", count, []string{"event_type:" + evtType}, 1.0); err != nil {
			return err
		}
	}
	return nil
}

type ActivityDumpManager struct {
	sync.RWMutex
	statsdClient         StatsdClient
	tagsResolvers        TagsResolver
	workloadDenyList     []WorkloadSelector
	activeDumps          []*ActivityDump
	workloadDenyListHits int
}

// resolveTags resolves activity dump container tags when they are missing
func (adm *ActivityDumpManager) resolveTags() {
	adm.Lock()
	dumps := make([]*ActivityDump, len(adm.activeDumps))
	copy(dumps, adm.activeDumps)
	adm.Unlock()
	for _, ad := range dumps {
		if err := adm.resolveTagsPerAd(ad); err != nil {
			fmt.Printf("couldn't resolve activity dump tags (will try again later): %v\n", err)
		}
	}
}

func (adm *ActivityDumpManager) resolveTagsPerAd(ad *ActivityDump) error {
	ad.Lock()
	defer ad.Unlock()
	if err := ad.resolveTags(); err != nil {
		return err
	}
	// check if we should discard this dump based on the manager dump limiter or the deny list
	selector := ad.getWorkloadSelector()
	if selector == nil {
		return nil // wait for the tags
	}
	shouldFinalize := false
	for _, entry := range adm.workloadDenyList {
		if entry == *selector {
			shouldFinalize = true
			adm.workloadDenyListHits++
		}
	}
	if shouldFinalize {
		ad.finalize(true)
		adm.RemoveDump(ad)
	}
	return nil
}

// RemoveDump removes a dump
func (adm *ActivityDumpManager) RemoveDump(inputDump *ActivityDump) {
	adm.Lock()
	defer adm.Unlock()
	for i, ad := range adm.activeDumps {
		if ad == inputDump {
			adm.activeDumps = append(adm.activeDumps[:i], adm.activeDumps[i+1:]...)
			break
		}
	}
}

// SendStats sends the activity dump manager stats
func (adm *ActivityDumpManager) SendStats() error {
	adm.Lock()
	defer adm.Unlock()
	for _, ad := range adm.activeDumps {
		if err := ad.SendStats(); err != nil {
			return fmt.Errorf("couldn't send metrics for %s: %w", ad.ContainerID, err)
		}
	}
	return adm.statsdClient.Count("datadog.runtime_security.activity_dump.active_dumps", int64(len(adm.activeDumps)), nil, 1.0)
}

func main() {
	adm := &ActivityDumpManager{statsdClient: stdoutStatsd{}, tagsResolvers: remoteTagger{},
		workloadDenyList: []WorkloadSelector{{Image: "nginx", Tag: "1.25"}}}
	adm.activeDumps = []*ActivityDump{{adm: adm, ContainerID: "3f1c2b9d8e7a", addedRuntimeCount: map[string]int64{"exec": 12}}}

	var wg sync.WaitGroup // the manager's tags ticker and the module's stats ticker
	wg.Add(2)
	go func() { defer wg.Done(); adm.resolveTags() }()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		_ = adm.SendStats()
	}()
	wg.Wait()
	fmt.Println("active dumps:", len(adm.activeDumps), "deny-list hits:", adm.workloadDenyListHits)
}
