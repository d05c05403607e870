package golangci

import (
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestExampleConfigs checks the files users copy: .custom-gcl.yml imports
// this package, and every linter .golangci.yml enables is registered here
// and accepts the settings given for it.
func TestExampleConfigs(t *testing.T) {
	var custom struct {
		Version string
		Plugins []struct{ Module, Import string }
	}
	readYAML(t, "example/.custom-gcl.yml", &custom)
	if custom.Version != "v2.15.0" || len(custom.Plugins) != 1 ||
		custom.Plugins[0].Module != "github.com/confinelint/confinelint" ||
		custom.Plugins[0].Import != "github.com/confinelint/confinelint/plugin/golangci" {
		t.Errorf(".custom-gcl.yml: %+v", custom)
	}

	var cfg struct {
		Version string
		Linters struct {
			Enable   []string
			Settings struct {
				Custom map[string]struct {
					Type     string
					Settings any
				}
			}
		}
	}
	readYAML(t, "example/.golangci.yml", &cfg)
	if cfg.Version != "2" {
		t.Errorf(".golangci.yml: version %q, want \"2\"", cfg.Version)
	}
	for _, name := range []string{"confined", "lockorder", "revokepath"} {
		if !slices.Contains(cfg.Linters.Enable, name) {
			t.Errorf(".golangci.yml does not enable %s", name)
		}
		c, ok := cfg.Linters.Settings.Custom[name]
		if !ok || c.Type != "module" {
			t.Errorf(".golangci.yml: %s is not a module plugin: %+v", name, c)
			continue
		}
		if _, err := build(t, name, c.Settings); err != nil {
			t.Errorf(".golangci.yml: settings of %s: %v", name, err)
		}
	}
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
