// Project: mattermost/mattermost-server (app/plugin.go ShutDownPlugins, plugin/environment.go Shutdown), 5.15/5.16, September 2019.
// Bug: App.ShutDownPlugins took the server's PluginsLock (write) and kept it while Environment.Shutdown ran
// every plugin's OnDeactivate hook over RPC; a plugin (the demo plugin) calls API.CreatePost from OnDeactivate,
// and the server side of CreatePost calls GetPluginsEnvironment, which needs PluginsLock.RLock, so shutdown
// hangs (MM-18188, fixed by PR #12371 / MM-18540 which only takes the lock after the plugins are shut down).
package main

import (
	"fmt"
	"sync"
)

type Post struct {
	ChannelId string
	Message   string
}

const (
	OnDeactivateId         = 2
	MessageHasBeenPostedId = 9
)

type Hooks interface {
	OnDeactivate() error
	MessageHasBeenPosted(post *Post)
}

type API interface {
	CreatePost(post *Post) (*Post, error)
}

type rpcCall struct {
	method string
	post   *Post
	reply  chan error
}

// hooksRPCClient is the server-side stub: each hook is a blocking call to the plugin process.
type hooksRPCClient struct {
	conn        chan rpcCall
	implemented map[int]bool
}

func (g *hooksRPCClient) OnDeactivate() error {
	reply := make(chan error)
	g.conn <- rpcCall{method: "Plugin.OnDeactivate", reply: reply}
	return <-reply
}

func (g *hooksRPCClient) MessageHasBeenPosted(post *Post) {
	reply := make(chan error)
	g.conn <- rpcCall{method: "Plugin.MessageHasBeenPosted", post: post, reply: reply}
	<-reply
}

// apiRPCClient lives in the plugin process and calls back into the server over the mux broker.
type apiRPCClient struct{ conn chan rpcCall }

func (a *apiRPCClient) CreatePost(post *Post) (*Post, error) {
	reply := make(chan error)
	a.conn <- rpcCall{method: "API.CreatePost", post: post, reply: reply}
	return post, <-reply
}

// serveAPI is the server-side apiRPCServer, serving the plugin's API calls.
func serveAPI(conn chan rpcCall, impl API) {
	for call := range conn {
		_, err := impl.CreatePost(call.post)
		call.reply <- err
	}
}

type supervisor struct{ hooks *hooksRPCClient }

func (s *supervisor) Hooks() Hooks                { return s.hooks }
func (s *supervisor) Implements(hookId int) bool  { return s.hooks.implemented[hookId] }
func (s *supervisor) Shutdown()                   { close(s.hooks.conn) }
func newSupervisor(h *hooksRPCClient) *supervisor { return &supervisor{hooks: h} }
func (env *Environment) IsActive(id string) bool  { _, ok := env.registeredPlugins.Load(id); return ok }
func (env *Environment) Active() []*registeredPlugin {
	var out []*registeredPlugin
	env.registeredPlugins.Range(func(_, v interface{}) bool { out = append(out, v.(*registeredPlugin)); return true })
	return out
}

type registeredPlugin struct {
	id         string
	supervisor *supervisor
}

type Environment struct {
	registeredPlugins sync.Map
}

// Shutdown deactivates all plugins and gracefully shuts down the environment.
func (env *Environment) Shutdown() {
	env.registeredPlugins.Range(func(key, value interface{}) bool {
		rp := value.(*registeredPlugin)
		if rp.supervisor == nil || !env.IsActive(rp.id) {
			return true
		}
		if err := rp.supervisor.Hooks().OnDeactivate(); err != nil {
			fmt.Println("Plugin OnDeactivate() error", rp.id, err)
		}
		rp.supervisor.Shutdown()
		env.registeredPlugins.Delete(key)
		return true
	})
}

func (env *Environment) RunMultiPluginHook(hookRunnerFunc func(hooks Hooks) bool, hookId int) {
	for _, rp := range env.Active() {
		if !rp.supervisor.Implements(hookId) {
			continue
		}
		if !hookRunnerFunc(rp.supervisor.Hooks()) {
			break
		}
	}
}

type Server struct {
	PluginsLock            sync.RWMutex
	PluginsEnvironment     *Environment
	PluginConfigListenerId string
}

type App struct{ Srv *Server }

func (a *App) GetPluginsEnvironment() *Environment {
	a.Srv.PluginsLock.RLock()
	defer a.Srv.PluginsLock.RUnlock()
	return a.Srv.PluginsEnvironment
}

func (a *App) CreatePost(post *Post) (*Post, error) {
	// ... store.Post().Save(post) ...
	if pluginsEnvironment := a.GetPluginsEnvironment(); pluginsEnvironment != nil {
		go pluginsEnvironment.RunMultiPluginHook(func(hooks Hooks) bool {
			hooks.MessageHasBeenPosted(post)
			return true
		}, MessageHasBeenPostedId)
	}
	return post, nil
}

func (a *App) RemoveConfigListener(id string) {}

func (a *App) ShutDownPlugins() {
	pluginsEnvironment := a.GetPluginsEnvironment()
	if pluginsEnvironment == nil {
		return
	}
	fmt.Println("Shutting down plugins")
	pluginsEnvironment.Shutdown()

	a.RemoveConfigListener(a.Srv.PluginConfigListenerId)
	a.Srv.PluginConfigListenerId = ""
	a.Srv.PluginsLock.Lock()
	defer a.Srv.PluginsLock.Unlock()
	a.Srv.PluginsEnvironment = nil
}

// pluginAPI adapts App to the plugin API for one plugin.
type pluginAPI struct{ app *App }

func (api *pluginAPI) CreatePost(post *Post) (*Post, error) { return api.app.CreatePost(post) }

type demoPlugin struct{ API API }

func (p *demoPlugin) OnDeactivate() error {
	_, err := p.API.CreatePost(&Post{ChannelId: "town-square", Message: "Demo plugin is being deactivated"})
	return err
}

func servePlugin(conn chan rpcCall, p *demoPlugin) {
	for call := range conn {
		if call.method == "Plugin.OnDeactivate" {
			call.reply <- p.OnDeactivate()
		} else {
			call.reply <- nil
		}
	}
}

func main() {
	app := &App{Srv: &Server{PluginConfigListenerId: "listener"}}
	env := &Environment{}

	hooksConn, apiConn := make(chan rpcCall), make(chan rpcCall)
	go servePlugin(hooksConn, &demoPlugin{API: &apiRPCClient{conn: apiConn}})
	go serveAPI(apiConn, &pluginAPI{app: app})
	hooks := &hooksRPCClient{conn: hooksConn, implemented: map[int]bool{OnDeactivateId: true}}
	env.registeredPlugins.Store("com.mattermost.demo-plugin", &registeredPlugin{id: "com.mattermost.demo-plugin", supervisor: newSupervisor(hooks)})
	app.Srv.PluginsEnvironment = env

	app.ShutDownPlugins()
	fmt.Println("plugins shut down")
}
