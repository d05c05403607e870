// Fixed twin (PR #2911 applied).
// Project: prymitive/karma (Alertmanager dashboard), v0.78-era backend,
// March 2021.
// Files: internal/alertmanager/models.go (Alertmanager.ClusterMemberNames,
// Alertmanager.ClusterPeers, Alertmanager.ClusterID, Alertmanager.Pull),
// internal/alertmanager/upstreams.go (GetAlertmanagers),
// cmd/karma/views.go (alerts handler computing cluster IDs).
// Issue: prymitive/karma#2888; fixed by PR prymitive/karma#2911
// "fix(backend): fix a deadlock in ClusterMemberNames()".
//
// ClusterMemberNames read-locks its own Alertmanager for the whole call
// (defer am.lock.RUnlock()) and, while holding it, walks every other
// upstream returned by GetAlertmanagers and calls upstream.ClusterPeers(),
// which read-locks that other Alertmanager. Two HTTP requests computing
// ClusterID for alertmanager "am1" and "am2" therefore take the read locks
// in opposite orders (am1 -> am2 and am2 -> am1). Read locks alone would
// coexist, but the periodic Pull of each upstream write-locks it to store the
// fresh status; once a writer is queued on am2 behind the request holding
// am2's read lock, Go's RWMutex blocks the other request's new RLock on am2,
// and symmetrically on am1, so both requests and both pullers wait forever.
// The fix copies the needed status fields under a short RLock, releases it,
// and only then iterates the other upstreams.
package main

import (
	"crypto/sha1"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

type AlertmanagerStatus struct {
	ID      string
	PeerIDs []string
	Version string
}

type Alertmanager struct {
	Name   string
	URI    string
	lock   sync.RWMutex
	status AlertmanagerStatus
}

var (
	upstreamsLock sync.RWMutex
	upstreams     = map[string]*Alertmanager{}
)

// GetAlertmanagers returns a list of all defined Alertmanager instances
func GetAlertmanagers() []*Alertmanager {
	upstreamsLock.RLock()
	defer upstreamsLock.RUnlock()
	ams := []*Alertmanager{}
	for _, am := range upstreams {
		ams = append(ams, am)
	}
	sort.Slice(ams, func(i, j int) bool { return ams[i].Name < ams[j].Name })
	return ams
}

func stringInSlice(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ClusterPeers returns a list of IDs of all peers this instance
// is connected to.
func (am *Alertmanager) ClusterPeers() []string {
	am.lock.RLock()
	defer am.lock.RUnlock()
	return am.status.PeerIDs
}

// ClusterMemberNames returns a list of names of all Alertmanager instances
// that are in the same cluster as this instance (including self).
func (am *Alertmanager) ClusterMemberNames() []string {
	// copy status so we don't need to hold RLock until return
	am.lock.RLock()
	peerIDs := make([]string, len(am.status.PeerIDs))
	copy(peerIDs, am.status.PeerIDs)
	am.lock.RUnlock()

	members := []string{am.Name}
	time.Sleep(30 * time.Millisecond) // request handling interleaves here

	for _, upstream := range GetAlertmanagers() {
		if upstream.Name == am.Name {
			continue
		}
		for _, peerID := range upstream.ClusterPeers() {
			if stringInSlice(peerIDs, peerID) {
				if !stringInSlice(members, upstream.Name) {
					members = append(members, upstream.Name)
				}
			}
		}
	}
	sort.Strings(members)
	return members
}

// ClusterID returns the ID (sha1) of the cluster this Alertmanager instance
// belongs to
func (am *Alertmanager) ClusterID() string {
	members := am.ClusterMemberNames()
	return fmt.Sprintf("%x", sha1.Sum([]byte(strings.Join(members, ","))))
}

func (am *Alertmanager) fetchStatus() (*AlertmanagerStatus, error) {
	return &AlertmanagerStatus{ID: am.Name + "-id", PeerIDs: []string{"am1-id", "am2-id"}, Version: "0.21.0"}, nil
}

// Pull data from upstream Alertmanager instance
func (am *Alertmanager) Pull() error {
	status, err := am.fetchStatus()
	if err != nil {
		return err
	}
	am.lock.Lock()
	am.status = *status
	am.lock.Unlock()
	return nil
}

func main() {
	for _, name := range []string{"am1", "am2"} {
		upstreams[name] = &Alertmanager{Name: name, URI: "http://" + name + ":9093",
			status: AlertmanagerStatus{ID: name + "-id", PeerIDs: []string{"am1-id", "am2-id"}}}
	}

	var wg sync.WaitGroup
	for _, am := range GetAlertmanagers() {
		wg.Add(2)
		go func(am *Alertmanager) { // GET /alerts.json -> cluster ID of am
			defer wg.Done()
			fmt.Println(am.Name, "cluster", am.ClusterID())
		}(am)
		go func(am *Alertmanager) { // background upstream poller
			defer wg.Done()
			time.Sleep(10 * time.Millisecond)
			if err := am.Pull(); err != nil {
				fmt.Println("pull:", err)
			}
		}(am)
	}
	wg.Wait()
}
