// Project: kubernetes/kubernetes (staging/src/k8s.io/component-base/featuregate/registry.go componentGlobalsRegistry.SetFallback/Set), v1.31 development, July 2024 (issue #125905, fixed by PR #125920 "fix lock bug for componentGlobalsRegistry"; pre-fix body reconstructed, approximate).
// Bug: componentGlobalsRegistry.SetFallback takes r.mutex to check whether Set() already ran and, when it has not, calls r.Set() while still holding it; Set() starts with r.mutex.Lock(), so a component that reaches SetFallback without having called Set() blocks forever on the registry mutex it already holds, and the fix copies r.set under the lock and releases it before calling Set().
package main

import (
	"fmt"
	"sort"
	"sync"
)

// ---- k8s.io/apimachinery/pkg/util/version ----
type Version struct{ major, minor uint }

func MajorMinor(major, minor uint) *Version { return &Version{major, minor} }

func (v *Version) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// ---- k8s.io/component-base/version ----
type EffectiveVersion interface {
	BinaryVersion() *Version
	EmulationVersion() *Version
}

type MutableEffectiveVersion interface {
	EffectiveVersion
	SetEmulationVersion(*Version)
}

type effectiveVersion struct {
	mu                sync.Mutex
	binary, emulation *Version
}

func NewEffectiveVersion(major, minor uint) MutableEffectiveVersion {
	v := MajorMinor(major, minor)
	return &effectiveVersion{binary: v, emulation: v}
}

func (e *effectiveVersion) BinaryVersion() *Version { return e.binary }

func (e *effectiveVersion) EmulationVersion() *Version {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.emulation
}

func (e *effectiveVersion) SetEmulationVersion(v *Version) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.emulation = v
}

// ---- k8s.io/component-base/featuregate ----
type MutableVersionedFeatureGate interface {
	SetEmulationVersion(*Version) error
	KnownFeatures() []string
	Set(kv string) error
}

type featureGate struct {
	lock      sync.Mutex
	emulation *Version
	known     map[string]bool
}

func NewFeatureGate(features ...string) MutableVersionedFeatureGate {
	fg := &featureGate{known: map[string]bool{}}
	for _, f := range features {
		fg.known[f] = false
	}
	return fg
}

func (f *featureGate) SetEmulationVersion(v *Version) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.emulation = v
	return nil
}

func (f *featureGate) KnownFeatures() []string {
	f.lock.Lock()
	defer f.lock.Unlock()
	var out []string
	for k := range f.known {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (f *featureGate) Set(kv string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.known[kv] = true
	return nil
}

type ComponentGlobals struct {
	effectiveVersion MutableEffectiveVersion
	featureGate      MutableVersionedFeatureGate
}

type ComponentGlobalsRegistry interface {
	Register(component string, ev MutableEffectiveVersion, fg MutableVersionedFeatureGate) error
	Set() error
	SetFallback() error
}

type componentGlobalsRegistry struct {
	componentGlobals   map[string]*ComponentGlobals
	mutex              sync.RWMutex
	featureGatesConfig map[string][]string
	set                bool
}

var DefaultComponentGlobalsRegistry ComponentGlobalsRegistry = &componentGlobalsRegistry{
	componentGlobals: map[string]*ComponentGlobals{},
}

func (r *componentGlobalsRegistry) Register(component string, ev MutableEffectiveVersion, fg MutableVersionedFeatureGate) error {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	if _, ok := r.componentGlobals[component]; ok {
		return fmt.Errorf("component globals of %s already registered", component)
	}
	if err := fg.SetEmulationVersion(ev.EmulationVersion()); err != nil {
		return err
	}
	r.componentGlobals[component] = &ComponentGlobals{effectiveVersion: ev, featureGate: fg}
	return nil
}

// SetFallback calls Set() if it has never been called.
func (r *componentGlobalsRegistry) SetFallback() error {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	if r.set {
		return nil
	}
	fmt.Println("W: setting componentGlobalsRegistry in SetFallback. We recommend calling componentGlobalsRegistry.Set() right after parsing flags")
	return r.Set()
}

func (r *componentGlobalsRegistry) Set() error {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	r.set = true
	for comp, globals := range r.componentGlobals {
		if err := globals.featureGate.SetEmulationVersion(globals.effectiveVersion.EmulationVersion()); err != nil {
			return fmt.Errorf("%s: %w", comp, err)
		}
	}
	for comp, fgs := range r.featureGatesConfig {
		for _, kv := range fgs {
			if err := r.componentGlobals[comp].featureGate.Set(kv); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- a component's options: Complete() falls back when the command did not call Set() ----
type ServerRunOptions struct{ ComponentName string }

func (s *ServerRunOptions) Complete() error {
	return DefaultComponentGlobalsRegistry.SetFallback()
}

func main() {
	_ = DefaultComponentGlobalsRegistry.Register("kube", NewEffectiveVersion(1, 31), NewFeatureGate("ComponentSLIs", "WatchList"))
	_ = DefaultComponentGlobalsRegistry.Register("wardle", NewEffectiveVersion(1, 2), NewFeatureGate("BanFlunder"))
	opts := &ServerRunOptions{ComponentName: "kube-apiserver"}
	if err := opts.Complete(); err != nil {
		fmt.Println("complete:", err)
		return
	}
	fmt.Println(opts.ComponentName, "options completed")
}
