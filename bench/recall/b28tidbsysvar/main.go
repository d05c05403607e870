// Project: pingcap/tidb (pkg/domain/sysvar_cache.go, pkg/sessionctx/variable/sysvar.go)
// Bug:     issues #55373 / #62699 (recursive lock setting tidb_restricted_read_only); fix PR #55407.
// Domain.rebuildSysVarCache holds sysVarCache.rebuildLock while it calls the
// SetGlobal callback stored in every *SysVar. The SetGlobal of
// tidb_restricted_read_only checks s.StmtCtx.StmtType == "Set"; the session it is
// given comes from the system session pool and still carries the StmtType of the
// last internal SET it ran, so it calls GlobalVarsAccessor.SetGlobalSysVar(
// tidb_super_read_only) -> session.replaceGlobalVariablesTableValue ->
// Domain.NotifyUpdateSysVarCache -> rebuildSysVarCache, which locks rebuildLock
// again on the same goroutine. `SET GLOBAL tidb_restricted_read_only = ON` hangs.
// Deadlocking acquisition: do.sysVarCache.rebuildLock.Lock() in rebuildSysVarCache.
package main

import (
	"context"
	"fmt"
	"sync"
)

const (
	TiDBRestrictedReadOnly = "tidb_restricted_read_only"
	TiDBSuperReadOnly      = "tidb_super_read_only"
)

type StatementContext struct{ StmtType string }

// GlobalVarAccessor is implemented by the session.
type GlobalVarAccessor interface {
	SetGlobalSysVar(ctx context.Context, name, value string) error
	SetGlobalSysVarOnly(ctx context.Context, name, value string, updateLocal bool) error
}

type SessionVars struct {
	StmtCtx            *StatementContext
	GlobalVarsAccessor GlobalVarAccessor
}

type SysVar struct {
	Name      string
	Value     string
	SetGlobal func(ctx context.Context, s *SessionVars, val string) error
}

var restrictedReadOnly, superReadOnly bool

var sysVars = map[string]*SysVar{}

func RegisterSysVar(sv *SysVar) { sysVars[sv.Name] = sv }

var defaultSysVars = []*SysVar{
	{Name: TiDBRestrictedReadOnly, Value: "OFF", SetGlobal: func(ctx context.Context, s *SessionVars, val string) error {
		on := val == "ON"
		// For user initiated SET GLOBAL, also change the value of TiDBSuperReadOnly
		if on && s.StmtCtx.StmtType == "Set" {
			if err := s.GlobalVarsAccessor.SetGlobalSysVar(ctx, TiDBSuperReadOnly, "ON"); err != nil {
				return err
			}
		}
		restrictedReadOnly = on
		return nil
	}},
	{Name: TiDBSuperReadOnly, Value: "OFF", SetGlobal: func(_ context.Context, _ *SessionVars, val string) error {
		superReadOnly = val == "ON"
		return nil
	}},
}

func init() {
	for _, v := range defaultSysVars {
		RegisterSysVar(v)
	}
}

func GetSysVar(name string) *SysVar { return sysVars[name] }

type sysVarCache struct {
	sync.RWMutex // protects global map
	global       map[string]string
	rebuildLock  sync.Mutex // protects concurrent rebuild
}

type Domain struct {
	sysVarCache    sysVarCache
	sysSessionPool []*session
	mysqlGlobalVar map[string]string // stands in for mysql.global_variables
}
type session struct {
	dom  *Domain
	vars *SessionVars
}

func newSession(dom *Domain) *session {
	s := &session{dom: dom}
	s.vars = &SessionVars{StmtCtx: &StatementContext{}, GlobalVarsAccessor: s}
	return s
}

func (s *session) ExecuteInternal(stmtType string) { s.vars.StmtCtx.StmtType = stmtType }

func (s *session) replaceGlobalVariablesTableValue(ctx context.Context, name, val string, updateLocal bool) error {
	s.dom.mysqlGlobalVar[name] = val
	return s.dom.NotifyUpdateSysVarCache(updateLocal)
}

func (s *session) SetGlobalSysVar(ctx context.Context, name, value string) error {
	return s.replaceGlobalVariablesTableValue(ctx, name, value, true)
}

func (s *session) SetGlobalSysVarOnly(ctx context.Context, name, value string, updateLocal bool) error {
	return s.replaceGlobalVariablesTableValue(ctx, name, value, updateLocal)
}

// NotifyUpdateSysVarCache rebuilds the local cache (etcd notification elided).
func (do *Domain) NotifyUpdateSysVarCache(updateLocal bool) error {
	if updateLocal {
		return do.rebuildSysVarCache(nil)
	}
	return nil
}

func (do *Domain) rebuildSysVarCache(ctx *session) error {
	newGlobalCache := make(map[string]string)
	if ctx == nil {
		ctx = do.sysSessionPool[0] // Get() from the system session pool
	}
	do.sysVarCache.rebuildLock.Lock() // re-entered from the SetGlobal callback below
	defer do.sysVarCache.rebuildLock.Unlock()

	for _, name := range []string{TiDBRestrictedReadOnly, TiDBSuperReadOnly} {
		sv := GetSysVar(name)
		sVal := sv.Value
		if v, ok := do.mysqlGlobalVar[sv.Name]; ok {
			sVal = v
		}
		newGlobalCache[sv.Name] = sVal
		if sv.SetGlobal != nil {
			_ = sv.SetGlobal(context.Background(), ctx.vars, sVal) // errors are only logged
		}
	}
	do.sysVarCache.Lock()
	defer do.sysVarCache.Unlock()
	do.sysVarCache.global = newGlobalCache
	return nil
}

func main() {
	dom := &Domain{mysqlGlobalVar: map[string]string{}}
	sysSess := newSession(dom)
	dom.sysSessionPool = []*session{sysSess}
	sysSess.ExecuteInternal("Set") // the pooled session's last internal SQL was a SET

	user := newSession(dom)
	// SET GLOBAL tidb_restricted_read_only = ON (SetExecutor.setSysVariable)
	err := user.SetGlobalSysVar(context.Background(), TiDBRestrictedReadOnly, "ON")
	fmt.Println("set global done:", err, restrictedReadOnly, superReadOnly)
}
