// Project: Teleport (lib/kube/proxy/server.go, the Kubernetes access proxy / kubernetes_service), v13
// Issue: gravitational/teleport PR #27183 "lib/kube/proxy/server.go: Fix potential mutex deadlock on error" (fixes teleport-private#663)
// Fixed twin of b34teleportkubeserve, with the fix of PR #27183: Serve unlocks t.mu right after
// http2.ConfigureServer and checks the error afterwards, so a configuration error no longer leaves the mutex
// locked and Close can proceed.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// memListener is the TLS side of the multiplexer (mux.TLS()).
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 3026} }

// Mux is lib/multiplexer: it detects the protocol and hands TLS connections to TLS().
type Mux struct {
	listener net.Listener
	tls      *memListener
}

func NewMux(listener net.Listener) (*Mux, error) {
	if listener == nil {
		return nil, errors.New("missing parameter Listener")
	}
	return &Mux{listener: listener, tls: &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}}, nil
}

func (m *Mux) TLS() net.Listener { return m.tls }
func (m *Mux) Serve() error      { return nil }
func (m *Mux) Close() error      { return m.tls.Close() }

// configureHTTP2Server mirrors the checks of golang.org/x/net/http2.ConfigureServer.
func configureHTTP2Server(s *http.Server) error {
	if s.TLSConfig == nil {
		s.TLSConfig = new(tls.Config)
	} else if s.TLSConfig.CipherSuites != nil && s.TLSConfig.MinVersion < tls.VersionTLS13 {
		haveRequired := false
		for _, cs := range s.TLSConfig.CipherSuites {
			switch cs {
			case tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
				tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:
				haveRequired = true
			}
		}
		if !haveRequired {
			return fmt.Errorf("http2: TLSConfig.CipherSuites is missing an HTTP/2-required AES_128_GCM_SHA256 cipher (need at least one of TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)")
		}
	}
	s.TLSConfig.NextProtos = append(s.TLSConfig.NextProtos, "h2")
	return nil
}

type TLSServerConfig struct {
	TLS        *tls.Config
	PublicAddr string
	HostID     string
}

// TLSServer is the kubernetes_service / proxy TLS server.
type TLSServer struct {
	*http.Server
	TLSServerConfig

	closeContext context.Context
	closeFunc    context.CancelFunc

	mu         sync.Mutex
	listener   net.Listener
	heartbeats map[string]func()
}

func NewTLSServer(cfg TLSServerConfig) *TLSServer {
	t := &TLSServer{
		Server:          &http.Server{Handler: http.NotFoundHandler(), TLSConfig: cfg.TLS},
		TLSServerConfig: cfg,
		heartbeats:      make(map[string]func()),
	}
	t.closeContext, t.closeFunc = context.WithCancel(context.Background())
	return t
}

// Serve takes TCP listener, upgrades to TLS using config and starts serving
func (t *TLSServer) Serve(listener net.Listener) error {
	// Wrap listener with a multiplexer to get Proxy Protocol support.
	mux, err := NewMux(listener)
	if err != nil {
		return err
	}
	go mux.Serve()
	defer mux.Close()

	t.mu.Lock()
	t.listener = mux.TLS()
	err = configureHTTP2Server(t.Server)
	t.mu.Unlock()
	if err != nil {
		return err
	}

	return t.Server.Serve(tls.NewListener(mux.TLS(), t.TLS))
}

// GetServerInfo returns the kubernetes server for heartbeats (aka presence).
func (t *TLSServer) GetServerInfo(name string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var addr string
	if t.PublicAddr != "" {
		addr = t.PublicAddr
	} else if t.listener != nil {
		addr = t.listener.Addr().String()
	}
	return fmt.Sprintf("kube_server %s/%s at %s", t.HostID, name, addr), nil
}

// Close closes the server and cleans up all resources.
func (t *TLSServer) Close() error {
	return t.close(t.closeContext)
}

func (t *TLSServer) close(ctx context.Context) error {
	errs := []error{t.Server.Close()}
	t.closeFunc()

	t.mu.Lock()
	for name, stop := range t.heartbeats {
		stop()
		delete(t.heartbeats, name)
	}
	var listClose error
	if t.listener != nil {
		listClose = t.listener.Close()
	}
	t.mu.Unlock()
	return errors.Join(append(errs, listClose)...)
}

type tcpListener struct{ net.Listener }

func main() {
	cfg := TLSServerConfig{
		// operator-restricted cipher list without an AES-128-GCM suite
		TLS: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384},
		},
		HostID: "5d1c7a0e",
	}
	srv := NewTLSServer(cfg)

	errCh := make(chan error, 1)
	go func() {
		errCh <- srv.Serve(&tcpListener{})
	}()

	if err := <-errCh; err != nil {
		fmt.Println("kubernetes_service: serve failed:", err)
	}
	// the supervisor tears the service down after the failure
	if err := srv.Close(); err != nil {
		fmt.Println("close:", err)
	}
	fmt.Println("kubernetes_service stopped")
}
