// Project: github.com/labstack/echo (v4, echo.go)
// Bug: StartTLS takes e.startupMutex and returns early when the certificate or key
// cannot be read without unlocking it; the lock leaks on that error path and the
// application's later e.Shutdown / e.Close (or TLSListenerAddr) blocks forever.
// Fix: unlock startupMutex on every early-return error path of StartTLS.

package b20echotls

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

type Echo struct {
	startupMutex    sync.RWMutex
	middleware      []func(HandlerFunc) HandlerFunc
	routes          map[string]HandlerFunc
	Server          *http.Server
	TLSServer       *http.Server
	Listener        net.Listener
	TLSListener     net.Listener
	DisableHTTP2    bool
	Debug           bool
	HideBanner      bool
	ListenerNetwork string
}

func New() *Echo {
	return &Echo{
		Server:          new(http.Server),
		TLSServer:       new(http.Server),
		routes:          map[string]HandlerFunc{},
		ListenerNetwork: "tcp",
	}
}

func (e *Echo) GET(path string, h HandlerFunc) { e.routes["GET"+path] = h }

func filepathOrContent(fileOrContent interface{}) (content []byte, err error) {
	switch v := fileOrContent.(type) {
	case string:
		return os.ReadFile(v)
	case []byte:
		return v, nil
	default:
		return nil, errors.New("invalid cert or key type, must be string or []byte")
	}
}

// StartTLS starts an HTTPS server.
func (e *Echo) StartTLS(address string, certFile, keyFile interface{}) (err error) {
	e.startupMutex.Lock()
	var cert []byte
	if cert, err = filepathOrContent(certFile); err != nil {
		return
	}
	var key []byte
	if key, err = filepathOrContent(keyFile); err != nil {
		return
	}
	s := e.TLSServer
	s.TLSConfig = new(tls.Config)
	s.TLSConfig.Certificates = make([]tls.Certificate, 1)
	if s.TLSConfig.Certificates[0], err = tls.X509KeyPair(cert, key); err != nil {
		e.startupMutex.Unlock()
		return
	}
	e.configureTLS(address)
	return e.startTLS(address)
}

func (e *Echo) configureTLS(address string) {
	s := e.TLSServer
	s.Addr = address
	if !e.DisableHTTP2 {
		s.TLSConfig.NextProtos = append(s.TLSConfig.NextProtos, "h2")
	}
}

func (e *Echo) startTLS(address string) error {
	s := e.TLSServer
	if e.TLSListener == nil {
		l, err := net.Listen(e.ListenerNetwork, address)
		if err != nil {
			e.startupMutex.Unlock()
			return err
		}
		e.TLSListener = tls.NewListener(l, s.TLSConfig)
	}
	e.startupMutex.Unlock()
	return s.Serve(e.TLSListener)
}

// TLSListenerAddr returns net.Addr for TLSListener
func (e *Echo) TLSListenerAddr() net.Addr {
	e.startupMutex.RLock()
	defer e.startupMutex.RUnlock()
	if e.TLSListener == nil {
		return nil
	}
	return e.TLSListener.Addr()
}

// Close immediately stops the server.
func (e *Echo) Close() error {
	e.startupMutex.Lock()
	defer e.startupMutex.Unlock()
	if err := e.TLSServer.Close(); err != nil {
		return err
	}
	return e.Server.Close()
}

// Shutdown stops the server gracefully.
func (e *Echo) Shutdown(ctx context.Context) error {
	e.startupMutex.Lock()
	defer e.startupMutex.Unlock()
	if err := e.TLSServer.Shutdown(ctx); err != nil {
		return err
	}
	return e.Server.Shutdown(ctx)
}

func TestStartTLSMissingCertThenShutdown(t *testing.T) {
	e := New()
	e.GET("/health", func(w http.ResponseWriter, r *http.Request) error { return nil })
	dir := t.TempDir()

	if err := e.StartTLS("127.0.0.1:0", filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")); err == nil {
		t.Fatal("expected error for missing certificate")
	}
	done := make(chan error)
	go func() { // signal handler: graceful shutdown on SIGTERM
		done <- e.Shutdown(context.Background())
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
