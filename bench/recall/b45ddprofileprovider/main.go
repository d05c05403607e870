// Project: DataDog/datadog-agent, Cloud Workload Security, ~7.49 (Sept 2023).
// Files/functions: pkg/security/security_profile/profile/manager.go
// (SecurityProfileManager.SendStats, OnNewProfileEvent, NewSecurityProfileManager),
// directory_provider.go (DirectoryProvider.onHandleFilesFromWatcher,
// loadProfile, SendStats). Issue/PR: DataDog/datadog-agent PR #19644 "[CWS]
// always lock using the same order", fixing a deadlock introduced by PR #19369.
//
// PR #19369 gave the directory provider a SendStats method that takes the
// provider's embedded mutex; the manager's SendStats called it for each
// provider at the end, still holding m.profilesLock (and pendingCacheLock).
// The provider goes the other way: the newFilesDebouncer goroutine runs
// onHandleFilesFromWatcher -> loadProfile, which takes dp.Lock and calls
// dp.onNewProfileCallback, a func field NewSecurityProfileManager set to the
// method value m.OnNewProfileEvent, which takes m.profilesLock. The metrics
// goroutine holds profilesLock and waits on dp.Lock through the Provider
// interface, the debouncer holds dp.Lock and waits on profilesLock. The fix
// sends the providers' metrics first, before profilesLock is taken.
package main

import (
	"fmt"
	"sync"
	"time"
)

type WorkloadSelector struct{ Image, Tag string }

func (s WorkloadSelector) Match(o WorkloadSelector) bool {
	return s.Image == o.Image && (s.Tag == o.Tag || s.Tag == "*" || o.Tag == "*")
}

type SecurityProfileProto struct {
	Selector WorkloadSelector
	Version  string
}

type StatsdClient interface {
	Gauge(name string, value float64, tags []string, rate float64) error
}

type slowStatsd struct{} // the dogstatsd client writing to its socket

func (slowStatsd) Gauge(string, float64, []string, float64) error {
	time.Sleep(100 * time.Millisecond)
	return nil
}

type Provider interface {
	SetOnNewProfileCallback(cb func(selector WorkloadSelector, profile *SecurityProfileProto))
	UpdateWorkloadSelectors(selectors []WorkloadSelector)
	SendStats(client StatsdClient) error
}

type profileFSEntry struct{ path, version string }

type DirectoryProvider struct {
	sync.Mutex
	files             map[string]*SecurityProfileProto // the watched directory
	newFiles          map[string]bool
	newFilesLock      sync.Mutex
	newFilesDebouncer *debouncer

	onNewProfileCallback func(selector WorkloadSelector, profile *SecurityProfileProto)
	selectors            []WorkloadSelector
	profileMapping       map[WorkloadSelector]profileFSEntry
}

// debouncer runs its callback on its own goroutine, like skydive's go-debouncer.
type debouncer struct{ cb func() }

func (d *debouncer) Call() { go d.cb() }

func NewDirectoryProvider(files map[string]*SecurityProfileProto) *DirectoryProvider {
	dp := &DirectoryProvider{files: files, newFiles: map[string]bool{}, profileMapping: map[WorkloadSelector]profileFSEntry{}}
	dp.newFilesDebouncer = &debouncer{cb: dp.onHandleFilesFromWatcher}
	return dp
}

func (dp *DirectoryProvider) SetOnNewProfileCallback(cb func(selector WorkloadSelector, profile *SecurityProfileProto)) {
	dp.onNewProfileCallback = cb
}

func (dp *DirectoryProvider) UpdateWorkloadSelectors(selectors []WorkloadSelector) {
	dp.Lock()
	defer dp.Unlock()
	dp.selectors = selectors
}

func (dp *DirectoryProvider) loadProfile(profilePath string) error {
	profile, ok := dp.files[profilePath]
	if !ok {
		return fmt.Errorf("couldn't load profile %s", profilePath)
	}
	workloadSelector := profile.Selector
	// lock selectors and profiles mapping
	dp.Lock()
	defer dp.Unlock()

	dp.profileMapping[workloadSelector] = profileFSEntry{path: profilePath, version: profile.Version}
	// check if this profile matches a workload selector
	for _, selector := range dp.selectors {
		if workloadSelector.Match(selector) {
			dp.onNewProfileCallback(workloadSelector, profile)
		}
	}
	return nil
}

func (dp *DirectoryProvider) onHandleFilesFromWatcher() {
	dp.newFilesLock.Lock()
	defer dp.newFilesLock.Unlock()
	for file := range dp.newFiles {
		_ = dp.loadProfile(file)
	}
	dp.newFiles = make(map[string]bool)
}

// watchEvent is what the fsnotify loop does on a Write of a .profile file.
func (dp *DirectoryProvider) watchEvent(name string) {
	dp.newFilesLock.Lock()
	dp.newFiles[name] = true
	dp.newFilesLock.Unlock()
	dp.newFilesDebouncer.Call()
}

func (dp *DirectoryProvider) SendStats(client StatsdClient) error {
	dp.Lock()
	defer dp.Unlock()
	if value := len(dp.profileMapping); value > 0 {
		return client.Gauge("datadog.runtime_security.security_profile.directory_provider.count", float64(value), nil, 1.0)
	}
	return nil
}

type SecurityProfile struct{ Version string }

type SecurityProfileManager struct {
	statsdClient     StatsdClient
	providers        []Provider
	profilesLock     sync.Mutex
	profiles         map[WorkloadSelector]*SecurityProfile
	pendingCacheLock sync.Mutex
}

func NewSecurityProfileManager(client StatsdClient, providers ...Provider) *SecurityProfileManager {
	m := &SecurityProfileManager{statsdClient: client, providers: providers, profiles: map[WorkloadSelector]*SecurityProfile{}}
	// register the manager to the provider(s)
	for _, p := range m.providers {
		p.SetOnNewProfileCallback(m.OnNewProfileEvent)
	}
	return m
}

func (m *SecurityProfileManager) OnNewProfileEvent(selector WorkloadSelector, newProfile *SecurityProfileProto) {
	m.profilesLock.Lock()
	defer m.profilesLock.Unlock()
	if profile, ok := m.profiles[selector]; ok {
		profile.Version = newProfile.Version
	}
}

func (m *SecurityProfileManager) SendStats() error {
	m.profilesLock.Lock()
	defer m.profilesLock.Unlock()
	m.pendingCacheLock.Lock()
	defer m.pendingCacheLock.Unlock()

	if err := m.statsdClient.Gauge("datadog.runtime_security.security_profile.profiles", float64(len(m.profiles)), nil, 1.0); err != nil {
		return err
	}
	for _, provider := range m.providers {
		if err := provider.SendStats(m.statsdClient); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	nginx := WorkloadSelector{Image: "nginx", Tag: "1.25"}
	dp := NewDirectoryProvider(map[string]*SecurityProfileProto{
		"/etc/datadog-agent/runtime-security.d/profiles/nginx.profile": {Selector: nginx, Version: "2"},
	})
	m := NewSecurityProfileManager(slowStatsd{}, dp)
	m.profiles[nginx] = &SecurityProfile{Version: "1"}
	dp.UpdateWorkloadSelectors([]WorkloadSelector{nginx})

	done := make(chan error)
	go func() { done <- m.SendStats() }() // the metrics ticker
	time.Sleep(20 * time.Millisecond)
	dp.watchEvent("/etc/datadog-agent/runtime-security.d/profiles/nginx.profile")

	fmt.Println("stats sent:", <-done)
	time.Sleep(50 * time.Millisecond)
	m.profilesLock.Lock()
	defer m.profilesLock.Unlock()
	fmt.Println("profile version", m.profiles[nginx].Version)
}
