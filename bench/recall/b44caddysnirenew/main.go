// Project: mholt/caddy (web server with automatic HTTPS), v0.9.x, Jan 2017.
// Files/functions: caddytls/maintain.go: maintainAssets,
// RenewManagedCertificates; caddytls/config.go: Config.RenewCert;
// caddytls/client.go: newACMEClient, ACMEClient.Renew, tlsSniSolver.Present;
// caddytls/certificates.go: cacheCertificate; xenolf/lego's Client calling
// the registered ChallengeProvider.
// Issue/PR: mholt/caddy PR #1366 "tls: Fix background certificate renewals
// that use TLS-SNI challenge".
//
// RenewManagedCertificates read-locks certCacheMu to iterate the certificate
// cache and renews expiring certificates right there. The renewal's ACME
// client solves TLS-SNI-01 with Caddy's own tlsSniSolver, whose Present puts
// the challenge certificate into the same cache via cacheCertificate, which
// write-locks certCacheMu under the read lock the same goroutine holds: the
// maintenance goroutine and every TLS handshake needing the cache hang. The
// fix queues the renewals under the read lock and runs them after RUnlock.
package main

import (
	"fmt"
	"log"
	"sync"
	"time"
)

const TLSSNI01 = "tls-sni-01"

var (
	RenewInterval       = 20 * time.Millisecond
	RenewDurationBefore = 30 * 24 * time.Hour

	certCache   = make(map[string]Certificate)
	certCacheMu sync.RWMutex
)

type Certificate struct {
	Names    []string
	NotAfter time.Time
	Config   *Config
}

type Config struct {
	Hostname          string
	Managed, OnDemand bool
}

// ChallengeProvider is the lego interface challenge solvers implement.
type ChallengeProvider interface {
	Present(domain, token, keyAuth string) error
	CleanUp(domain, token, keyAuth string) error
}

// legoClient is a stand-in for *acme.Client from xenolf/lego.
type legoClient struct{ providers map[string]ChallengeProvider }

func (c *legoClient) SetChallengeProvider(ch string, p ChallengeProvider) { c.providers[ch] = p }

func (c *legoClient) RenewCertificate(domain string) (time.Time, error) {
	solver := c.providers[TLSSNI01]
	token, keyAuth := "tok-"+domain, "keyauth-"+domain
	if err := solver.Present(domain, token, keyAuth); err != nil {
		return time.Time{}, err
	}
	defer solver.CleanUp(domain, token, keyAuth)
	return time.Now().Add(90 * 24 * time.Hour), nil // CA validated and issued
}

type ACMEClient struct {
	AllowPrompts bool
	config       *Config
	acmeClient   *legoClient // *acme.Client
}

func newACMEClient(config *Config, allowPrompts bool) (*ACMEClient, error) {
	c := &ACMEClient{AllowPrompts: allowPrompts, config: config,
		acmeClient: &legoClient{providers: map[string]ChallengeProvider{}}}
	// The TLS-SNI port is served by Caddy itself, so use our own solver.
	c.acmeClient.SetChallengeProvider(TLSSNI01, tlsSniSolver{})
	return c, nil
}

func (c *ACMEClient) Renew(name string) error {
	notAfter, err := c.acmeClient.RenewCertificate(name)
	if err != nil {
		return err
	}
	log.Printf("[INFO] %s: certificate renewed, valid until %s", name, notAfter.Format("2006-01-02"))
	return nil
}

func (c *Config) RenewCert(name string, allowPrompts bool) error {
	client, err := newACMEClient(c, allowPrompts)
	if err != nil {
		return err
	}
	return client.Renew(name)
}

// tlsSniSolver solves tls-sni challenges using an existing listener.
type tlsSniSolver struct{}

// Present adds the challenge certificate to the cache.
func (s tlsSniSolver) Present(domain, token, keyAuth string) error {
	acmeDomain := fmt.Sprintf("%x.acme.invalid", len(keyAuth))
	cacheCertificate(Certificate{Names: []string{acmeDomain}, NotAfter: time.Now().Add(time.Hour)})
	return nil
}

// CleanUp removes the challenge certificate from the cache.
func (s tlsSniSolver) CleanUp(domain, token, keyAuth string) error {
	uncacheCertificate(fmt.Sprintf("%x.acme.invalid", len(keyAuth)))
	return nil
}

func cacheCertificate(cert Certificate) {
	if cert.Config == nil {
		cert.Config = new(Config)
	}
	certCacheMu.Lock()
	for _, name := range cert.Names {
		certCache[name] = cert
	}
	certCacheMu.Unlock()
}

func uncacheCertificate(name string) {
	certCacheMu.Lock()
	delete(certCache, name)
	certCacheMu.Unlock()
}

// RenewManagedCertificates renews managed certificates.
func RenewManagedCertificates(allowPrompts bool) (err error) {
	var renewed []Certificate
	visitedNames := make(map[string]struct{})

	certCacheMu.RLock()
	for name, cert := range certCache {
		if !cert.Config.Managed {
			continue
		}
		if _, ok := visitedNames[name]; ok {
			continue
		}
		for _, name := range cert.Names {
			visitedNames[name] = struct{}{}
		}
		timeLeft := cert.NotAfter.Sub(time.Now().UTC())
		if timeLeft < RenewDurationBefore {
			log.Printf("[INFO] Certificate for %v expires in %v; attempting renewal", cert.Names, timeLeft.Round(time.Hour))
			err := cert.Config.RenewCert(cert.Names[0], allowPrompts)
			if err != nil {
				log.Printf("[ERROR] %v", err)
				continue
			}
			renewed = append(renewed, cert)
		}
	}
	certCacheMu.RUnlock()
	// Apply changes to the cache (CacheManagedCertificate reloads from storage).
	for _, cert := range renewed {
		cert.NotAfter = time.Now().Add(90 * 24 * time.Hour)
		cacheCertificate(cert)
	}
	return nil
}

func maintainAssets(stopChan chan struct{}, done chan struct{}) {
	defer close(done)
	renewalTicker := time.NewTicker(RenewInterval)
	defer renewalTicker.Stop()
	for {
		select {
		case <-renewalTicker.C:
			log.Println("[INFO] Scanning for expiring certificates")
			RenewManagedCertificates(false)
		case <-stopChan:
			return
		}
	}
}

func main() {
	log.SetFlags(0)
	cfg := &Config{Hostname: "example.com", Managed: true}
	cacheCertificate(Certificate{Names: []string{"example.com"}, NotAfter: time.Now().Add(10 * 24 * time.Hour), Config: cfg})

	stop, done := make(chan struct{}), make(chan struct{})
	go maintainAssets(stop, done)
	time.Sleep(50 * time.Millisecond)
	close(stop)
	<-done
	certCacheMu.RLock()
	fmt.Println("cached certificates:", len(certCache))
	certCacheMu.RUnlock()
}
