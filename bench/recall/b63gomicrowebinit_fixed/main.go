// Fixed twin: Init no longer holds the web service's lock while the wrapped
// micro service runs the registered Action (PR #1585 direction).
// Shape of micro/go-micro issue #1560 (fixed by PR #1585, "web: fix
// deadlock"): web.service.Init holds the service's embedded mutex while it
// initialises the wrapped micro service; that service's Init runs the cli app,
// and the app calls the micro.Action closure web.Init itself registered,
// which locks the web service again.
package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// --- cli ---

type Context struct{ values map[string]string }

func (c *Context) String(name string) string { return c.values[name] }
func (c *Context) Int(name string) int {
	n, _ := strconv.Atoi(c.values[name])
	return n
}

type App struct {
	Name   string
	Action func(*Context) error
}

func (a *App) RunContext(args []string) error {
	ctx := &Context{values: map[string]string{}}
	for _, arg := range args {
		if kv := strings.SplitN(strings.TrimPrefix(arg, "--"), "=", 2); len(kv) == 2 {
			ctx.values[kv[0]] = kv[1]
		}
	}
	if a.Action != nil {
		return a.Action(ctx)
	}
	return nil
}

// --- micro ---

type MicroOptions struct {
	Name   string
	Action func(*Context) error
	Args   []string
}

type MicroOption func(*MicroOptions)

func Action(a func(*Context) error) MicroOption { return func(o *MicroOptions) { o.Action = a } }
func Name(n string) MicroOption                 { return func(o *MicroOptions) { o.Name = n } }

type MicroService interface {
	Init(...MicroOption)
	Name() string
}

type microService struct {
	opts MicroOptions
	app  *App
}

func NewMicroService(args []string) MicroService {
	return &microService{opts: MicroOptions{Args: args}, app: &App{}}
}

func (s *microService) Init(opts ...MicroOption) {
	for _, o := range opts {
		o(&s.opts)
	}
	s.app.Name = s.opts.Name
	s.app.Action = s.opts.Action
	if err := s.app.RunContext(s.opts.Args); err != nil {
		panic(err)
	}
}

func (s *microService) Name() string { return s.opts.Name }

// --- web ---

type Options struct {
	Name             string
	Address          string
	RegisterTTL      time.Duration
	RegisterInterval time.Duration
	Service          MicroService
}

type Option func(*Options)

func WebName(n string) Option { return func(o *Options) { o.Name = n } }

type RegistryService struct {
	Name    string
	Address string
}

type service struct {
	opts Options
	srv  *RegistryService

	sync.Mutex
	running bool
	static  bool
}

func NewService(args []string, opts ...Option) *service {
	s := &service{opts: Options{Address: ":0", Service: NewMicroService(args)}, static: true}
	for _, o := range opts {
		o(&s.opts)
	}
	s.srv = s.genSrv()
	return s
}

func (s *service) genSrv() *RegistryService {
	return &RegistryService{Name: s.opts.Name, Address: s.opts.Address}
}

func (s *service) Init(opts ...Option) error {
	s.Lock()
	for _, o := range opts {
		o(&s.opts)
	}
	serviceOpts := []MicroOption{Name(s.opts.Name)}
	s.Unlock()

	serviceOpts = append(serviceOpts, Action(func(ctx *Context) error {
		s.Lock()
		defer s.Unlock()
		if ttl := ctx.Int("register_ttl"); ttl > 0 {
			s.opts.RegisterTTL = time.Duration(ttl) * time.Second
		}
		if interval := ctx.Int("register_interval"); interval > 0 {
			s.opts.RegisterInterval = time.Duration(interval) * time.Second
		}
		if addr := ctx.String("server_address"); len(addr) > 0 {
			s.opts.Address = addr
		}
		return nil
	}))

	// the wrapped service runs the Action above, which takes s's lock
	s.opts.Service.Init(serviceOpts...)

	s.Lock()
	s.srv = s.genSrv()
	s.Unlock()
	return nil
}

func (s *service) HandleFunc(pattern string) {
	if pattern == "/" {
		s.Lock()
		s.static = false
		s.Unlock()
	}
}

func main() {
	args := []string{"--register_ttl=30", "--server_address=127.0.0.1:8080"}
	svc := NewService(args, WebName("go.micro.web.greeter"))
	svc.HandleFunc("/")
	if err := svc.Init(); err != nil {
		panic(err)
	}
	fmt.Printf("registered %s at %s (ttl %v)\n", svc.srv.Name, svc.srv.Address, svc.opts.RegisterTTL)
}
