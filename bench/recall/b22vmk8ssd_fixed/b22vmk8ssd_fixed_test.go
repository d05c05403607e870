// Project: VictoriaMetrics/VictoriaMetrics (lib/promscrape/discovery/kubernetes)
// Bug: urlWatcher.updateObjects holds uw.mu while rebuilding scrape works for
//      its apiWatchers; building endpoints targets resolves the referenced pods
//      through groupWatcher.getObjectByRole, which takes gw.mu. Meanwhile
//      groupWatcher.getScrapeWorkObjectsForRole holds gw.mu and takes each
//      uw.mu in turn. uw.mu -> gw.mu vs gw.mu -> uw.mu deadlocks discovery.
// Fix: always lock gw.mu before uw.mu: updateObjects takes gw.mu first and
//      uses getObjectByRoleLocked, which expects gw.mu to be held.

package b22vmk8ssd_fixed

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type object interface {
	key() string
	getTargetLabels(gw *groupWatcher) []map[string]string
}

type Pod struct{ Namespace, Name, IP string }

func (p *Pod) key() string { return p.Namespace + "/" + p.Name }

func (p *Pod) getTargetLabels(gw *groupWatcher) []map[string]string {
	return []map[string]string{{"__address__": p.IP, "__meta_kubernetes_pod_name": p.Name}}
}

type Endpoints struct {
	Namespace, Name string
	PodNames        []string
}

func (eps *Endpoints) key() string { return eps.Namespace + "/" + eps.Name }

func (eps *Endpoints) getTargetLabels(gw *groupWatcher) []map[string]string {
	var ms []map[string]string
	for _, name := range eps.PodNames {
		o := gw.getObjectByRoleLocked("pod", eps.Namespace, name)
		p, ok := o.(*Pod)
		if !ok {
			continue
		}
		ms = append(ms, map[string]string{"__address__": p.IP, "__meta_kubernetes_endpoints_name": eps.Name})
	}
	return ms
}

type ScrapeWork struct{ Labels map[string]string }

type apiWatcher struct {
	role    string
	swcFunc func(labels map[string]string) *ScrapeWork
	swosMu  sync.Mutex
	swos    map[string][]*ScrapeWork
}

func (aw *apiWatcher) setScrapeWorks(key string, labelss []map[string]string) {
	var swos []*ScrapeWork
	for _, labels := range labelss {
		if sw := aw.swcFunc(labels); sw != nil {
			swos = append(swos, sw)
		}
	}
	aw.swosMu.Lock()
	aw.swos[key] = swos
	aw.swosMu.Unlock()
}

type urlWatcher struct {
	role            string
	apiURL          string
	gw              *groupWatcher
	mu              sync.Mutex
	aws             map[*apiWatcher]struct{}
	objectsByKey    map[string]object
	resourceVersion string
	objectsUpdated  int
}

type groupWatcher struct {
	apiServer string
	mu        sync.Mutex
	m         map[string]*urlWatcher
}

// getObjectByRoleLocked must be called with gw.mu held.
func (gw *groupWatcher) getObjectByRoleLocked(role, namespace, name string) object {
	key := namespace + "/" + name
	for _, uw := range gw.m {
		if uw.role != role {
			continue
		}
		uw.mu.Lock()
		o := uw.objectsByKey[key]
		uw.mu.Unlock()
		if o != nil {
			return o
		}
	}
	return nil
}

func (gw *groupWatcher) getScrapeWorkObjectsForRole(role string) []object {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	var objs []object
	for _, uw := range gw.m {
		if uw.role != role {
			continue
		}
		uw.mu.Lock()
		for _, o := range uw.objectsByKey {
			objs = append(objs, o)
		}
		uw.mu.Unlock()
	}
	return objs
}

func (uw *urlWatcher) updateObjects(objs []object, resourceVersion string) {
	uw.gw.mu.Lock()
	defer uw.gw.mu.Unlock()
	uw.mu.Lock()
	defer uw.mu.Unlock()
	for _, o := range objs {
		uw.objectsByKey[o.key()] = o
		uw.objectsUpdated++
	}
	uw.resourceVersion = resourceVersion
	for aw := range uw.aws {
		for _, o := range objs {
			aw.setScrapeWorks(o.key(), o.getTargetLabels(uw.gw))
		}
	}
}

func newURLWatcher(gw *groupWatcher, role string) *urlWatcher {
	uw := &urlWatcher{role: role, gw: gw, aws: map[*apiWatcher]struct{}{}, objectsByKey: map[string]object{},
		apiURL: fmt.Sprintf("%s/api/v1/%ss?watch=1", gw.apiServer, role)}
	gw.m[uw.apiURL] = uw
	return uw
}

func TestProbe(t *testing.T) {
	gw := &groupWatcher{apiServer: "https://10.96.0.1:443", m: map[string]*urlWatcher{}}
	pods := newURLWatcher(gw, "pod")
	endpoints := newURLWatcher(gw, "endpoints")
	pods.updateObjects([]object{
		&Pod{Namespace: "default", Name: "web-0", IP: "10.1.0.10:8080"},
		&Pod{Namespace: "default", Name: "web-1", IP: "10.1.0.11:8080"},
	}, "100")

	aw := &apiWatcher{role: "endpoints", swos: map[string][]*ScrapeWork{},
		swcFunc: func(labels map[string]string) *ScrapeWork {
			time.Sleep(40 * time.Millisecond)
			return &ScrapeWork{Labels: labels}
		}}
	endpoints.aws[aw] = struct{}{}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		endpoints.updateObjects([]object{
			&Endpoints{Namespace: "default", Name: "web", PodNames: []string{"web-0"}},
			&Endpoints{Namespace: "default", Name: "web-canary", PodNames: []string{"web-1"}},
		}, "101")
	}()
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		objs := gw.getScrapeWorkObjectsForRole("endpoints")
		t.Logf("discovered %d endpoints objects", len(objs))
	}()
	wg.Wait()
}
