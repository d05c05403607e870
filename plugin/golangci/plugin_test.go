package golangci

import (
	"strings"
	"testing"

	"github.com/golangci/plugin-module-register/register"
)

func build(t *testing.T, name string, raw any) (register.LinterPlugin, error) {
	t.Helper()
	newPlugin, err := register.GetPlugin(name)
	if err != nil {
		t.Fatal(err)
	}
	return newPlugin(raw)
}

func TestEachLinterRegisteredAlone(t *testing.T) {
	for _, name := range []string{"confined", "lockorder", "revokepath"} {
		p, err := build(t, name, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		as, err := p.BuildAnalyzers()
		if err != nil || len(as) != 1 || as[0].Name != name {
			t.Errorf("%s: analyzers %v, %v; want exactly the %s analyzer", name, as, err, name)
		}
		if p.GetLoadMode() != register.LoadModeTypesInfo {
			t.Errorf("%s: load mode %q", name, p.GetLoadMode())
		}
		if _, err := build(t, name, map[string]any{}); err != nil {
			t.Errorf("%s: empty settings: %v", name, err)
		}
	}
}

func TestUnknownSettingNamed(t *testing.T) {
	for _, name := range []string{"confined", "lockorder", "revokepath"} {
		_, err := build(t, name, map[string]any{"asynch": []string{"x"}})
		if err == nil || !strings.Contains(err.Error(), `"asynch"`) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: unknown key: err = %v, want one naming \"asynch\" and the linter", name, err)
		}
	}
	if _, err := build(t, "confined", map[string]any{"async": "not-a-list"}); err == nil {
		t.Errorf("async must be a list")
	}
}

func TestAsyncFeedsFlag(t *testing.T) {
	const api = "example.com/pool.(*Pool).Submit:arg0"
	p, err := build(t, "confined", map[string]any{"async": []any{api}})
	if err != nil {
		t.Fatal(err)
	}
	as, _ := p.BuildAnalyzers()
	f := as[0].Flags.Lookup("async")
	if f == nil {
		t.Fatal("confined has no async flag")
	}
	if !strings.Contains(f.Value.String(), api) {
		t.Errorf("-confined.async = %q, want it to contain %q", f.Value.String(), api)
	}
}
