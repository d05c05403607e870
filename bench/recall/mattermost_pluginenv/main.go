// Project: mattermost (server/public/plugin/environment.go, server/channels/app/plugin_api.go)
// Bug: Environment.Activate held env.mu while running the plugin's OnActivate hook. A plugin
// that calls back into the server API during activation (p.API.GetPluginStatus) reaches
// Environment.Statuses, which locks env.mu again on the same goroutine: the non-reentrant mutex
// self-deadlocks and the server hangs on plugin enable.
// Upstream fix: run hooks without holding the environment lock (state stored in registeredPlugins, a sync.Map); modelled, ticket number not recalled.
package main

import (
	"errors"
	"fmt"
	"sync"
)

const (
	PluginStateNotRunning = iota
	PluginStateStarting
	PluginStateRunning
	PluginStateFailedToStart
)

type PluginStatus struct {
	PluginId string
	State    int
}

// API is the server side surface exposed to plugins over RPC.
type API interface {
	GetPluginStatus(id string) (*PluginStatus, error)
	LogInfo(msg string, keyValuePairs ...any)
}

// Hooks is implemented by plugins.
type Hooks interface {
	OnActivate() error
	SetAPI(api API)
}

type MattermostPlugin struct {
	API API
}

func (p *MattermostPlugin) SetAPI(api API) { p.API = api }

type registeredPlugin struct {
	id    string
	state int
	hooks Hooks
}

type Environment struct {
	mu                sync.Mutex
	registeredPlugins map[string]*registeredPlugin
	newAPIImpl        func(id string) API
}

func NewEnvironment(newAPIImpl func(id string) API) *Environment {
	return &Environment{registeredPlugins: make(map[string]*registeredPlugin), newAPIImpl: newAPIImpl}
}

func (env *Environment) Register(id string, hooks Hooks) {
	env.mu.Lock()
	defer env.mu.Unlock()
	env.registeredPlugins[id] = &registeredPlugin{id: id, hooks: hooks}
}

func (env *Environment) Statuses() []*PluginStatus {
	env.mu.Lock()
	defer env.mu.Unlock()
	out := make([]*PluginStatus, 0, len(env.registeredPlugins))
	for id, rp := range env.registeredPlugins {
		out = append(out, &PluginStatus{PluginId: id, State: rp.state})
	}
	return out
}

func (env *Environment) Activate(id string) (bool, error) {
	env.mu.Lock()
	defer env.mu.Unlock()
	rp, ok := env.registeredPlugins[id]
	if !ok {
		return false, errors.New("plugin not found: " + id)
	}
	if rp.state == PluginStateRunning {
		return true, nil
	}
	rp.state = PluginStateStarting
	rp.hooks.SetAPI(env.newAPIImpl(id))
	if err := rp.hooks.OnActivate(); err != nil {
		rp.state = PluginStateFailedToStart
		return false, err
	}
	rp.state = PluginStateRunning
	return true, nil
}

// App side.
type App struct {
	env *Environment
}

func (a *App) GetPluginStatus(id string) (*PluginStatus, error) {
	for _, st := range a.env.Statuses() {
		if st.PluginId == id {
			return st, nil
		}
	}
	return nil, errors.New("not found")
}

type PluginAPI struct {
	id  string
	app *App
}

func (api *PluginAPI) GetPluginStatus(id string) (*PluginStatus, error) {
	return api.app.GetPluginStatus(id)
}

func (api *PluginAPI) LogInfo(msg string, kv ...any) { fmt.Println("["+api.id+"]", msg, kv) }

// A third party plugin (e.g. jira) checking that its companion plugin is up.
type JiraPlugin struct {
	MattermostPlugin
}

func (p *JiraPlugin) OnActivate() error {
	st, err := p.API.GetPluginStatus("com.mattermost.webapp-helper")
	if err != nil {
		return err
	}
	p.API.LogInfo("companion status", "state", st.State)
	return nil
}

type helperPlugin struct{ MattermostPlugin }

func (h *helperPlugin) OnActivate() error { return nil }

func main() {
	app := &App{}
	app.env = NewEnvironment(func(id string) API { return &PluginAPI{id: id, app: app} })
	app.env.Register("com.mattermost.webapp-helper", &helperPlugin{})
	app.env.Register("jira", &JiraPlugin{})

	for _, id := range []string{"com.mattermost.webapp-helper", "jira"} {
		active, err := app.env.Activate(id)
		fmt.Println(id, active, err)
	}
}
