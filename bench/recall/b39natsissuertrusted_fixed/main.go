// nats-io/nats-server, server/accounts.go (Account.checkStreamImportAuthorized,
// checkExportApproved, checkActivation, isIssuerClaimTrusted, hasIssuer) and
// Server.updateAccountClaims. Fixed by nats-io/nats-server PR #1191
// "[FIXED] Some accounts locking issues": "Risk of deadlock when
// checking if issuer claim are trusted".
//
// An importing account adds a stream import that needs an activation token.
// AddStreamImportWithClaim asks the exporting account, whose
// checkStreamImportAuthorized read-locks the exporter's a.mu (line 126) and
// goes on through checkStreamImportAuthorizedNoLock -> checkExportApproved ->
// checkActivation, which first fetches the token from its URL (slow, still
// under the read lock) and then calls isIssuerClaimTrusted. The token was
// signed with one of the exporter's signing keys, so its IssuerAccount is the
// exporter itself: the server lookup hands back the very same *Account and
// hasIssuer read-locks a.mu again (line 202). A JWT update for the exporter
// (updateAccountClaims, write lock at line 221) that arrived during the fetch
// is queued on a.mu, so the second RLock waits behind the writer, and the
// writer waits for the first RLock to go away. The fix only trusts an issuer
// account equal to a.Name and checks it with hasIssuerNoLock.
//
// FIXED TWIN: same program with the project's fix applied; the line numbers
// above refer to the unfixed probe in ../b39natsissuertrusted/main.go.
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

var ErrMissingAccount = errors.New("account missing")
var ErrStreamImportAuthorization = errors.New("stream import not authorized")

// Stand-ins for github.com/nats-io/jwt.
type Import struct {
	Account string
	Subject string
	To      string
	Token   string
}

type ActivationClaims struct {
	Issuer        string
	IssuerAccount string
	ImportSubject string
}

type AccountClaims struct {
	Subject     string
	SigningKeys []string
	Exports     []string
}

// The probe's activation token is "<issuer>|<issuerAccount>|<subject>".
func DecodeActivationClaims(token string) (*ActivationClaims, error) {
	parts := strings.Split(token, "|")
	if len(parts) != 3 {
		return nil, errors.New("bad token")
	}
	return &ActivationClaims{Issuer: parts[0], IssuerAccount: parts[1], ImportSubject: parts[2]}, nil
}

type exportAuth struct {
	tokenReq bool
	approved map[string]*Account
}

type streamImport struct {
	acc    *Account
	from   string
	prefix string
	claim  *Import
}

type Account struct {
	Name        string
	Issuer      string
	mu          sync.RWMutex
	imports     map[string]*streamImport
	exports     map[string]*exportAuth
	signingKeys []string
	srv         *Server
}

type Server struct {
	accounts sync.Map
}

func (s *Server) lookupAccount(name string) (*Account, error) {
	if v, ok := s.accounts.Load(name); ok {
		return v.(*Account), nil
	}
	return nil, ErrMissingAccount
}

// AddStreamImportWithClaim will add in the stream import from a specific account with optional token.
func (a *Account) AddStreamImportWithClaim(account *Account, from, prefix string, imClaim *Import) error {
	if account == nil {
		return ErrMissingAccount
	}
	// First check to see if the account has authorized export of the subject.
	if !account.checkStreamImportAuthorized(a, from, imClaim) {
		return ErrStreamImportAuthorization
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.imports == nil {
		a.imports = make(map[string]*streamImport)
	}
	a.imports[from] = &streamImport{account, from, prefix, imClaim}
	return nil
}

// AddStreamExport will add an export to the account.
func (a *Account) AddStreamExport(subject string, tokenReq bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.exports == nil {
		a.exports = make(map[string]*exportAuth)
	}
	a.exports[subject] = &exportAuth{tokenReq: tokenReq}
}

// Check if another account is authorized to import from us.
func (a *Account) checkStreamImportAuthorized(account *Account, subject string, imClaim *Import) bool {
	// Find the subject in the exports list.
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.checkStreamImportAuthorizedNoLock(account, subject, imClaim)
}

func (a *Account) checkStreamImportAuthorizedNoLock(account *Account, subject string, imClaim *Import) bool {
	if a.exports == nil {
		return false
	}
	return a.checkExportApproved(account, subject, imClaim, a.exports)
}

func (a *Account) checkExportApproved(account *Account, subject string, imClaim *Import, m map[string]*exportAuth) bool {
	ea, ok := m[subject]
	if !ok {
		return false
	}
	if ea == nil {
		return true
	}
	if ea.tokenReq {
		return a.checkActivation(account, imClaim, true)
	}
	_, ok = ea.approved[account.Name]
	return ok
}

// Will fetch the activation token for an import (an HTTP GET with a 2s
// timeout in the server; here a slow stand-in).
func fetchActivation(url string) string {
	time.Sleep(100 * time.Millisecond)
	return strings.TrimPrefix(url, "http://tokens.example/")
}

// checkActivation will check the activation token for validity.
func (a *Account) checkActivation(acc *Account, claim *Import, expTimer bool) bool {
	if claim == nil || claim.Token == "" {
		return false
	}
	clone := *claim
	if strings.HasPrefix(clone.Token, "http://") {
		clone.Token = fetchActivation(clone.Token)
	}
	act, err := DecodeActivationClaims(clone.Token)
	if err != nil {
		return false
	}
	if !a.isIssuerClaimTrusted(act) {
		return false
	}
	_ = expTimer
	return true
}

// Returns true if the activation claim is trusted. That is the issuer matches
// the account or is an entry in the signing keys.
func (a *Account) isIssuerClaimTrusted(claims *ActivationClaims) bool {
	// if no issuer account, issuer is the account
	if claims.IssuerAccount == "" {
		return true
	}
	// If the IssuerAccount is not us, then this is considered an error.
	if a.Name != claims.IssuerAccount {
		return false
	}
	// Lock is held by the caller (checkStreamImportAuthorized).
	return a.hasIssuerNoLock(claims.Issuer)
}

// hasIssuer returns true if the issuer matches the account
// issuer or it is a signing key for the account.
func (a *Account) hasIssuer(issuer string) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.hasIssuerNoLock(issuer)
}

func (a *Account) hasIssuerNoLock(issuer string) bool {
	if a.Issuer == issuer {
		return true
	}
	for i := 0; i < len(a.signingKeys); i++ {
		if a.signingKeys[i] == issuer {
			return true
		}
	}
	return false
}

// updateAccountClaims will update an existing account with new claims.
func (s *Server) updateAccountClaims(a *Account, ac *AccountClaims) {
	a.mu.Lock()
	a.exports = nil
	a.signingKeys = append([]string(nil), ac.SigningKeys...)
	a.mu.Unlock()
	for _, e := range ac.Exports {
		a.AddStreamExport(e, true)
	}
}

func main() {
	s := &Server{}
	exp := &Account{Name: "AEXPORTER", Issuer: "OPERATOR", signingKeys: []string{"ASIGNKEY"}, srv: s}
	imp := &Account{Name: "AIMPORTER", Issuer: "OPERATOR", srv: s}
	s.accounts.Store(exp.Name, exp)
	s.accounts.Store(imp.Name, imp)
	exp.AddStreamExport("orders.>", true)

	claim := &Import{Account: exp.Name, Subject: "orders.>", Token: "http://tokens.example/ASIGNKEY|AEXPORTER|orders.>"}
	done := make(chan error)
	go func() {
		done <- imp.AddStreamImportWithClaim(exp, "orders.>", "", claim)
	}()

	// A JWT update for the exporter arrives while the token is being fetched.
	time.Sleep(30 * time.Millisecond)
	s.updateAccountClaims(exp, &AccountClaims{Subject: exp.Name, SigningKeys: []string{"ASIGNKEY", "ASIGNKEY2"}, Exports: []string{"orders.>"}})

	fmt.Println("import:", <-done)
}
