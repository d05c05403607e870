// Project: GoogleContainerTools/kpt-config-sync (Config Sync), December 2024.
// Files: pkg/askpass/credentials.go (CachingCredentialProvider.Credentials,
// getCachedCredentials, LoggingTokenProvider.Token, getTokenExpiry),
// pkg/askpass/server.go (AskPassServer.ServeHTTP, retrieveToken), used by the
// git-sync, oci-sync and helm-sync sidecars of the reconciler Pod.
// Fix: GoogleContainerTools/kpt-config-sync PR #1508 "fix: mutex unlocking in
// LoggingTokenProvider" (bug introduced by PR #1505).
//
// PR #1505 wrapped the detected Google credentials in a LoggingTokenProvider
// that logs whenever the token expiry changes. Its getTokenExpiry took the
// read lock and deferred a second RLock instead of RUnlock, and Token took
// the write lock and deferred a second Lock instead of Unlock. The first time
// a sidecar asks for a token (askpass ServeHTTP -> retrieveToken ->
// CachingCredentialProvider.Credentials -> LoggingTokenProvider.Token),
// getTokenExpiry returns with p.mux still read-locked, the new expiry differs
// from the zero value, and Token's p.mux.Lock() blocks forever on the read
// lock its own helper left behind; oci-sync and helm-sync hang and crash. The
// fix defers RUnlock and Unlock.
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// auth.Token / auth.TokenProvider from cloud.google.com/go/auth.
type Token struct {
	Value  string
	Type   string
	Expiry time.Time
}

type TokenProvider interface {
	Token(ctx context.Context) (*Token, error)
}

// metadataServerProvider stands in for what credentials.DetectDefault returns.
type metadataServerProvider struct{}

func (metadataServerProvider) Token(ctx context.Context) (*Token, error) {
	return &Token{Value: "ya29.token", Type: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}

var detectDefault = func(scopes []string) (TokenProvider, error) {
	return metadataServerProvider{}, nil
}

// CredentialProvider specifies an interface for anything that can return credentials.
type CredentialProvider interface {
	Credentials() (TokenProvider, error)
}

// CachingCredentialProvider provides cached default detected credentials.
type CachingCredentialProvider struct {
	Scopes []string

	mux   sync.RWMutex
	creds TokenProvider
}

func (p *CachingCredentialProvider) Credentials() (TokenProvider, error) {
	if creds := p.getCachedCredentials(); creds != nil {
		return creds, nil
	}

	p.mux.Lock()
	defer p.mux.Unlock()
	creds, err := detectDefault(p.Scopes)
	if err != nil {
		return nil, fmt.Errorf("detecting credentials: %w", err)
	}
	p.creds = &LoggingTokenProvider{Delegate: creds}
	return p.creds, nil
}

func (p *CachingCredentialProvider) getCachedCredentials() TokenProvider {
	p.mux.RLock()
	defer p.mux.RUnlock()
	return p.creds
}

// LoggingTokenProvider wraps a delegate TokenProvider and logs when a new token
// is fetched.
type LoggingTokenProvider struct {
	Delegate TokenProvider

	mux         sync.RWMutex
	tokenExpiry time.Time
}

func (p *LoggingTokenProvider) Token(ctx context.Context) (*Token, error) {
	token, err := p.Delegate.Token(ctx)
	if err != nil {
		return nil, err
	}

	if p.getTokenExpiry() == token.Expiry {
		return token, nil // no change
	}

	p.mux.Lock()
	defer p.mux.Lock()
	p.tokenExpiry = token.Expiry
	fmt.Printf("fetched new auth token (type: %s, expiration: %v)\n", token.Type, token.Expiry)
	return token, nil
}

func (p *LoggingTokenProvider) getTokenExpiry() time.Time {
	p.mux.RLock()
	defer p.mux.RLock()
	return p.tokenExpiry
}

// AskPassServer answers git's GIT_ASKPASS requests with an access token.
type AskPassServer struct {
	Email              string
	CredentialProvider CredentialProvider
}

func (aps *AskPassServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, err := aps.retrieveToken(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "username=%s\npassword=%s\n", aps.Email, token.Value)
}

func (aps *AskPassServer) retrieveToken(ctx context.Context) (*Token, error) {
	creds, err := aps.CredentialProvider.Credentials()
	if err != nil {
		return nil, err
	}
	return creds.Token(ctx)
}

func main() {
	aps := &AskPassServer{
		Email:              "reconciler@project.iam.gserviceaccount.com",
		CredentialProvider: &CachingCredentialProvider{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}},
	}
	for i := 0; i < 2; i++ { // git fetch asks for credentials on every sync
		rec := httptest.NewRecorder()
		aps.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		fmt.Printf("askpass reply %d: %d bytes\n", i, rec.Body.Len())
	}
}
