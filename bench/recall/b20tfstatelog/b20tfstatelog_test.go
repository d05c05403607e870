// Project: github.com/hashicorp/terraform (terraform/state.go, 0.9-0.11 era)
// Bug: State gained a mutex and String() takes it; State.Remove logs the state with
// log.Printf("%s", s) while already holding s.mu, so the fmt call re-enters
// (*State).String and blocks on the non-reentrant mutex (terraform state rm hangs).
// Fix: the trace log no longer formats the whole locked State (only the addresses).

package b20tfstatelog

import (
	"bytes"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"testing"
)

type ResourceState struct {
	Type       string
	Provider   string
	Attributes map[string]string
}

type ModuleState struct {
	Path      []string
	Outputs   map[string]string
	Resources map[string]*ResourceState

	mu sync.Mutex
}

func (m *ModuleState) Lock()   { m.mu.Lock() }
func (m *ModuleState) Unlock() { m.mu.Unlock() }

func (m *ModuleState) String() string {
	m.Lock()
	defer m.Unlock()
	var buf bytes.Buffer
	names := make([]string, 0, len(m.Resources))
	for k := range m.Resources {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		rs := m.Resources[k]
		fmt.Fprintf(&buf, "%s:\n  ID = %s\n  provider = %s\n", k, rs.Attributes["id"], rs.Provider)
	}
	return buf.String()
}

// State keeps track of a snapshot state-of-the-world that Terraform can use
// to keep track of what real world resources it is actually managing.
type State struct {
	Version   int
	TFVersion string
	Serial    int64
	Lineage   string
	Modules   []*ModuleState

	mu sync.Mutex
}

func (s *State) Lock()   { s.mu.Lock() }
func (s *State) Unlock() { s.mu.Unlock() }

func (s *State) String() string {
	if s == nil {
		return "<nil>"
	}
	s.Lock()
	defer s.Unlock()

	var buf bytes.Buffer
	for _, m := range s.Modules {
		mStr := m.String()
		if len(m.Path) > 1 {
			fmt.Fprintf(&buf, "\nmodule.%s:\n", strings.Join(m.Path[1:], "."))
			mStr = "  " + strings.ReplaceAll(mStr, "\n", "\n  ")
		}
		buf.WriteString(mStr)
	}
	return strings.TrimSpace(buf.String())
}

func (s *State) moduleByPath(path []string) *ModuleState {
	for _, m := range s.Modules {
		if strings.Join(m.Path, ".") == strings.Join(path, ".") {
			return m
		}
	}
	return nil
}

func (s *State) ModuleByPath(path []string) *ModuleState {
	s.Lock()
	defer s.Unlock()
	return s.moduleByPath(path)
}

// Remove removes the item in the state at the given addresses.
func (s *State) Remove(addr ...string) error {
	s.Lock()
	defer s.Unlock()

	log.Printf("[TRACE] state: removing %q from state:\n%s", addr, s)
	for _, a := range addr {
		parts := strings.SplitN(a, ".", 2)
		mod := s.moduleByPath([]string{"root"})
		if len(parts) > 1 && parts[0] == "module" {
			return fmt.Errorf("module addresses are not supported: %s", a)
		}
		if mod == nil {
			continue
		}
		mod.Lock()
		delete(mod.Resources, a)
		mod.Unlock()
	}
	s.Serial++
	return nil
}

func (s *State) IncrementSerialMaybe(other *State) {
	s.Lock()
	defer s.Unlock()
	if other != nil && s.Serial <= other.Serial {
		s.Serial = other.Serial + 1
	}
}

func TestStateRemove(t *testing.T) {
	s := &State{Version: 3, TFVersion: "0.11.0", Lineage: "2d4b8c46", Modules: []*ModuleState{{
		Path: []string{"root"},
		Resources: map[string]*ResourceState{
			"aws_instance.web": {Type: "aws_instance", Provider: "provider.aws", Attributes: map[string]string{"id": "i-abc123"}},
			"aws_eip.web":      {Type: "aws_eip", Provider: "provider.aws", Attributes: map[string]string{"id": "eip-1"}},
		},
	}}}

	done := make(chan error)
	go func() { // terraform state rm aws_eip.web
		done <- s.Remove("aws_eip.web")
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := len(s.ModuleByPath([]string{"root"}).Resources); got != 1 {
		t.Fatalf("expected 1 resource left, got %d", got)
	}
}
