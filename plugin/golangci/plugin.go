// Package golangci registers confinelint's analyzers as golangci-lint v2
// module plugins: three linters, confined, lockorder and revokepath, each
// enabled, configured and //nolint-ed on its own.
//
// Build a custom golangci-lint with it (see .custom-gcl.yml and
// .golangci.yml in plugin/golangci/example and docs/running.md):
//
//	golangci-lint custom        # reads .custom-gcl.yml, writes ./custom-gcl
//	./custom-gcl run ./...
package golangci

import (
	"fmt"
	"strings"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/analyzers/confined"
	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/analyzers/revokepath"
)

func init() {
	register.Plugin("confined", newPlugin[confinedSettings](confined.Analyzer))
	register.Plugin("lockorder", newPlugin[noSettings](lockorder.Analyzer))
	register.Plugin("revokepath", newPlugin[noSettings](revokepath.Analyzer))
}

// confinedSettings are the confined linter's settings:
//
//	settings:
//	  async: ["example.com/pool.(*Pool).Submit:arg0"]
//
// async adds asynchronous APIs to the goroutine-root table, like the
// -confined.async flag.
type confinedSettings struct {
	Async []string `json:"async"`
}

func (s confinedSettings) apply(a *analysis.Analyzer) error {
	if len(s.Async) == 0 {
		return nil
	}
	f := a.Flags.Lookup("async")
	if f == nil {
		return fmt.Errorf("this build of %s has no async flag", a.Name)
	}
	return f.Value.Set(strings.Join(s.Async, ","))
}

// noSettings accepts no keys at all.
type noSettings struct{}

func (noSettings) apply(*analysis.Analyzer) error { return nil }

type settings interface {
	apply(*analysis.Analyzer) error
}

// newPlugin decodes the linter's settings strictly (an unknown key is an
// error naming it) and applies them to the analyzer's flags.
func newPlugin[S settings](a *analysis.Analyzer) register.NewPlugin {
	return func(raw any) (register.LinterPlugin, error) {
		s, err := register.DecodeSettings[S](raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name, err)
		}
		if err := s.apply(a); err != nil {
			return nil, fmt.Errorf("%s: settings: %w", a.Name, err)
		}
		return &plugin{a}, nil
	}
}

type plugin struct{ analyzer *analysis.Analyzer }

func (p *plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{p.analyzer}, nil
}

// GetLoadMode asks for type information: the analyzers need types and SSA.
func (p *plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
