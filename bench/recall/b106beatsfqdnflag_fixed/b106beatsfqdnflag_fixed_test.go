// Project: elastic/beats (libbeat/features/features.go and libbeat/processors/add_host_metadata/add_host_metadata.go), 8.x, 2023, when the Elastic Agent "fqdn" feature flag became switchable at runtime (PR number not recalled; approximate reconstruction).
// Bug: a feature flag update from the agent policy runs features.UpdateFromConfig, whose SetFQDNEnabled holds the flags RWMutex for writing while it invokes every registered FQDN on-change callback. The add_host_metadata processor registers a callback that reloads the cached host metadata, and loadData decides between hostname and FQDN by calling features.FQDN(), which read-locks the same RWMutex, so the policy reload goroutine blocks forever on the lock it holds (and every later event that asks features.FQDN() blocks behind it). The fix passes the flag value into loadData instead of reading it back from the features package inside the callback.
package b106beatsfqdnflagfixed

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// ---- libbeat/features ----

type boolValueOnChangeCallback func(new, old bool)

type fflags struct {
	mu sync.RWMutex
	// controls enablement of FQDN reporting for the `host.name` field
	fqdnEnabled   bool
	fqdnCallbacks map[string]boolValueOnChangeCallback
}

var flags = fflags{fqdnCallbacks: map[string]boolValueOnChangeCallback{}}

type featuresConfig struct {
	Features struct {
		FQDN *struct{ Enabled bool }
	}
}

// UpdateFromConfig updates the feature flags configuration.
func UpdateFromConfig(c *featuresConfig) error {
	if c == nil {
		return nil
	}
	flags.SetFQDNEnabled(c.Features.FQDN != nil && c.Features.FQDN.Enabled)
	return nil
}

func (f *fflags) SetFQDNEnabled(newValue bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	oldValue := f.fqdnEnabled
	f.fqdnEnabled = newValue
	for _, cb := range f.fqdnCallbacks {
		cb(newValue, oldValue)
	}
}

// FQDN reports if FQDN should be used instead of hostname for host.name.
func FQDN() bool {
	flags.mu.RLock()
	defer flags.mu.RUnlock()
	return flags.fqdnEnabled
}

func AddFQDNOnChangeCallback(cb boolValueOnChangeCallback, id string) {
	flags.mu.Lock()
	defer flags.mu.Unlock()
	flags.fqdnCallbacks[id] = cb
}

func RemoveFQDNOnChangeCallback(id string) {
	flags.mu.Lock()
	defer flags.mu.Unlock()
	delete(flags.fqdnCallbacks, id)
}

// ---- libbeat/processors/add_host_metadata ----

type hostInfo interface {
	Hostname() string
	FQDN() (string, error)
}

type staticHost struct{ name, fqdn string }

func (h staticHost) Hostname() string      { return h.name }
func (h staticHost) FQDN() (string, error) { return h.fqdn, nil }

type mapPointer struct {
	mu sync.RWMutex
	m  map[string]interface{}
}

func (p *mapPointer) Set(m map[string]interface{}) { p.mu.Lock(); p.m = m; p.mu.Unlock() }
func (p *mapPointer) Get() map[string]interface{}  { p.mu.RLock(); defer p.mu.RUnlock(); return p.m }

type Config struct{ CacheTTL time.Duration }

type addHostMetadata struct {
	lastUpdate struct {
		time.Time
		sync.Mutex
	}
	data       mapPointer
	config     Config
	host       hostInfo
	callbackID string
}

func New(cfg Config, h hostInfo, id string) (*addHostMetadata, error) {
	p := &addHostMetadata{config: cfg, host: h, callbackID: id}
	if err := p.loadData(true, FQDN()); err != nil {
		return nil, fmt.Errorf("failed to load data: %w", err)
	}
	AddFQDNOnChangeCallback(p.updateOrExpire, p.callbackID)
	return p, nil
}

// Run enriches the given event with the host metadata.
func (p *addHostMetadata) Run(event map[string]interface{}) (map[string]interface{}, error) {
	if err := p.loadData(true, FQDN()); err != nil {
		return nil, err
	}
	event["host"] = p.data.Get()
	return event, nil
}

func (p *addHostMetadata) expired() bool {
	p.lastUpdate.Lock()
	defer p.lastUpdate.Unlock()
	if p.config.CacheTTL > 0 && p.lastUpdate.Add(p.config.CacheTTL).After(time.Now()) {
		return false
	}
	p.lastUpdate.Time = time.Now()
	return true
}

// loadData updates the processor's associated host metadata.
func (p *addHostMetadata) loadData(checkCache bool, useFQDN bool) error {
	if checkCache && !p.expired() {
		return nil
	}
	hostname := p.host.Hostname()
	if useFQDN {
		fqdn, err := p.host.FQDN()
		if err != nil {
			return err
		}
		hostname = fqdn
	}
	p.data.Set(map[string]interface{}{"name": hostname, "hostname": p.host.Hostname()})
	return nil
}

// updateOrExpire is the FQDN feature flag callback.
func (p *addHostMetadata) updateOrExpire(new, old bool) {
	if new == old {
		return
	}
	if err := p.loadData(false, new); err != nil {
		p.lastUpdate.Lock()
		p.lastUpdate.Time = time.Time{}
		p.lastUpdate.Unlock()
	}
}

func (p *addHostMetadata) Close() error {
	RemoveFQDNOnChangeCallback(p.callbackID)
	return nil
}

func TestB106beatsfqdnflagFixed(t *testing.T) {
	p, err := New(Config{CacheTTL: 5 * time.Minute}, staticHost{name: "web-1", fqdn: "web-1.prod.example.com"}, "add_host_metadata-1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	// The agent policy enables FQDN reporting: the V2 manager applies the new feature flags.
	policy := &featuresConfig{}
	policy.Features.FQDN = &struct{ Enabled bool }{Enabled: true}
	if err := UpdateFromConfig(policy); err != nil {
		t.Fatal(err)
	}

	ev, err := p.Run(map[string]interface{}{"message": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ev["host"].(map[string]interface{})["name"]; got != "web-1.prod.example.com" {
		t.Fatalf("host.name = %v, want the FQDN", got)
	}
}
