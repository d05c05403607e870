// Project: pingcap/tidb (domain/sysvar_cache.go Domain.rebuildSysVarCache, domain/domain.go NotifyUpdateSysVarCache, sessionctx/variable/sysvar.go validate_password.* Validation, sessionctx/variable/varsutil.go updatePasswordValidationLength, session/session.go SetGlobalSysVarOnly, replaceGlobalVariablesTableValue), master toward v6.6, December 2022 (issue #40240, introduced by PR #39584, fixed by PR #40283).
// Bug: rebuildSysVarCache holds sysVarCache.rebuildLock while it runs ValidateWithRelaxedValidation on every global variable, and the Validation hook of validate_password.number_count raises validate_password.length through updatePasswordValidationLength, which writes the variable with SetGlobalSysVarOnly; that ends in NotifyUpdateSysVarCache, which rebuilds the local cache again and blocks on the rebuildLock its own goroutine already holds. The fix adds an updateLocal parameter to SetGlobalSysVarOnly so the write from inside validation does not rebuild the local cache.
package b100tidbpwdvalidation

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

const (
	ValidatePasswordLength           = "validate_password.length"
	ValidatePasswordNumberCount      = "validate_password.number_count"
	ValidatePasswordSpecialCharCount = "validate_password.special_char_count"
	ValidatePasswordMixedCaseCount   = "validate_password.mixed_case_count"
)

var (
	PasswordValidationLength           atomic.Int32
	PasswordValidationNumberCount      atomic.Int32
	PasswordValidationSpecialCharCount atomic.Int32
	PasswordValidationMixedCaseCount   atomic.Int32
)

// GlobalVarAccessor is implemented by the session.
type GlobalVarAccessor interface {
	SetGlobalSysVarOnly(name, value string) error
}

type SessionVars struct{ GlobalVarsAccessor GlobalVarAccessor }

type SysVar struct {
	Name       string
	Value      string
	Validation func(vars *SessionVars, normalizedValue string) (string, error)
	SetGlobal  func(vars *SessionVars, val string) error
}

// ValidateWithRelaxedValidation is used when loading values from the table.
func (sv *SysVar) ValidateWithRelaxedValidation(vars *SessionVars, value string) string {
	if sv.Validation != nil {
		if v, err := sv.Validation(vars, value); err == nil {
			return v
		}
	}
	return value
}

func updatePasswordValidationLength(s *SessionVars, minLength int32) error {
	if PasswordValidationLength.Load() < minLength {
		PasswordValidationLength.Store(minLength)
		return s.GlobalVarsAccessor.SetGlobalSysVarOnly(ValidatePasswordLength, strconv.Itoa(int(minLength)))
	}
	return nil
}

func atoi32(v string) int32 { n, _ := strconv.Atoi(v); return int32(n) }

var sysVars = []*SysVar{
	{Name: ValidatePasswordLength, Value: "8", SetGlobal: func(_ *SessionVars, v string) error {
		PasswordValidationLength.Store(atoi32(v))
		return nil
	}},
	{Name: ValidatePasswordNumberCount, Value: "1", Validation: func(vars *SessionVars, v string) (string, error) {
		minLength := atoi32(v) + PasswordValidationSpecialCharCount.Load() + 2*PasswordValidationMixedCaseCount.Load()
		return v, updatePasswordValidationLength(vars, minLength)
	}, SetGlobal: func(_ *SessionVars, v string) error {
		PasswordValidationNumberCount.Store(atoi32(v))
		return nil
	}},
}

func GetSysVars() []*SysVar { return sysVars }

type sysVarCache struct {
	sync.RWMutex // protects global and session maps
	global       map[string]string
	rebuildLock  sync.Mutex // protects concurrent rebuild
}

type Domain struct {
	sysVarCache sysVarCache
	store       *kvStore
	etcdPuts    atomic.Int32
}

type kvStore struct {
	mu   sync.Mutex
	vars map[string]string
}

func (do *Domain) SysSessionPool() func() *session {
	return func() *session { return newSession(do) }
}

func (do *Domain) fetchTableValues() map[string]string {
	do.store.mu.Lock()
	defer do.store.mu.Unlock()
	res := make(map[string]string, len(do.store.vars))
	for k, v := range do.store.vars {
		res[k] = v
	}
	return res
}

// rebuildSysVarCache rebuilds the sysvar cache both globally and for session vars.
func (do *Domain) rebuildSysVarCache(s *session) error {
	if s == nil {
		s = do.SysSessionPool()()
	}
	newGlobalCache := make(map[string]string)
	// Only one rebuild can be in progress at a time, this prevents a lost update race
	// where an earlier fetchTableValues() finishes last.
	do.sysVarCache.rebuildLock.Lock()
	defer do.sysVarCache.rebuildLock.Unlock()
	tableContents := do.fetchTableValues()
	for _, sv := range GetSysVars() {
		sVal := sv.Value
		if v, ok := tableContents[sv.Name]; ok {
			sVal = sv.ValidateWithRelaxedValidation(s.vars, v)
		}
		newGlobalCache[sv.Name] = sVal
	}
	do.sysVarCache.Lock()
	defer do.sysVarCache.Unlock()
	do.sysVarCache.global = newGlobalCache
	return nil
}

// NotifyUpdateSysVarCache updates the sysvar cache key in etcd, which other
// servers are watching for updates, and optionally rebuilds the local cache.
func (do *Domain) NotifyUpdateSysVarCache(updateLocal bool) {
	do.etcdPuts.Add(1)
	if updateLocal {
		do.rebuildSysVarCache(nil)
	}
}

type session struct {
	dom  *Domain
	vars *SessionVars
}

func newSession(dom *Domain) *session {
	s := &session{dom: dom}
	s.vars = &SessionVars{GlobalVarsAccessor: s}
	return s
}

func (s *session) replaceGlobalVariablesTableValue(varName, val string) error {
	s.dom.store.mu.Lock()
	s.dom.store.vars[varName] = val // REPLACE INTO mysql.global_variables
	s.dom.store.mu.Unlock()
	s.dom.NotifyUpdateSysVarCache(true)
	return nil
}

// SetGlobalSysVarOnly updates the sysvar, but does not call the validation function or update aliases.
func (s *session) SetGlobalSysVarOnly(name, value string) error {
	for _, sv := range GetSysVars() {
		if sv.Name == name && sv.SetGlobal != nil {
			if err := sv.SetGlobal(s.vars, value); err != nil {
				return err
			}
		}
	}
	return s.replaceGlobalVariablesTableValue(name, value)
}

func TestB100tidbpwdvalidation(t *testing.T) {
	PasswordValidationLength.Store(8)
	PasswordValidationNumberCount.Store(1)
	PasswordValidationSpecialCharCount.Store(1)
	PasswordValidationMixedCaseCount.Store(1)
	dom := &Domain{store: &kvStore{vars: map[string]string{
		ValidatePasswordLength:      "8",
		ValidatePasswordNumberCount: "9", // set by a previous SET GLOBAL; 9+1+2 > 8
	}}}
	// The privilege loop finds an empty cache after bootstrap and rebuilds it.
	if err := dom.rebuildSysVarCache(nil); err != nil {
		t.Fatal(err)
	}
	dom.sysVarCache.RLock()
	defer dom.sysVarCache.RUnlock()
	if got := dom.fetchTableValues()[ValidatePasswordLength]; got != "12" {
		t.Fatalf("validate_password.length = %s, want 12", got)
	}
}
