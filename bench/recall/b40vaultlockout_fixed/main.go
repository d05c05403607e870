// Project: hashicorp/vault, vault/request_handling.go (Core.handleLoginRequest's user
// lockout path: failedUserLoginProcess, isUserLocked, LocalGetUserFailedLoginInfo,
// LocalUpdateUserFailedLoginInfo), Vault 1.13-1.15.
// Fixed by PR hashicorp/vault#25697 "core/login: fix potential deadlock for failed logins
// when user lockout is enabled": "we can return without unlocking due to an error".
//
// With user lockout enabled, every failed login updates c.userFailedLoginInfo under
// c.userFailedLoginInfoLock (taken at line 94). When the failure count reaches the
// mount's lockout threshold the user is persisted as locked through the barrier; if the
// JSON encoding or barrier.Put fails (a sealed barrier, a storage error), the function
// returns the error at line 120 with the lock still held. The next login of any user asks
// isUserLocked -> LocalGetUserFailedLoginInfo, whose Lock (line 83) never returns, and
// login requests pile up forever. main fails a login at the threshold while the storage
// backend is refusing writes, then sends another login.
//
// FIXED twin: the PR's fix, the unlock is deferred right after the Lock (line 95).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrBarrierSealed = errors.New("Vault is sealed")

type StorageEntry struct {
	Key   string
	Value []byte
}

// SecurityBarrier is the part of vault.SecurityBarrier used here.
type SecurityBarrier interface {
	Put(ctx context.Context, entry *StorageEntry) error
}

type FailedLoginUser struct {
	aliasName     string
	mountAccessor string
}

type FailedLoginInfo struct {
	count               uint
	lastFailedLoginTime int
}

type UserLockoutConfig struct {
	LockoutThreshold uint64
	LockoutDuration  time.Duration
}

type MountEntry struct {
	Accessor    string
	NamespaceID string
	lockout     *UserLockoutConfig
}

type Router struct{ mounts map[string]*MountEntry }

func (r *Router) MatchingMountByAccessor(accessor string) *MountEntry { return r.mounts[accessor] }

const coreLockedUsersPath = "core/login/lockedUsers/"

type Core struct {
	router                  *Router
	barrier                 SecurityBarrier
	userFailedLoginInfoLock sync.RWMutex
	userFailedLoginInfo     map[FailedLoginUser]*FailedLoginInfo
}

func (c *Core) getUserLockoutConfiguration(mountEntry *MountEntry) UserLockoutConfig {
	if mountEntry.lockout != nil {
		return *mountEntry.lockout
	}
	return UserLockoutConfig{LockoutThreshold: 5, LockoutDuration: 15 * time.Minute}
}

// LocalGetUserFailedLoginInfo gets the failed login information for a user based on alias name and mountAccessor
func (c *Core) LocalGetUserFailedLoginInfo(ctx context.Context, userKey FailedLoginUser) *FailedLoginInfo {
	c.userFailedLoginInfoLock.Lock()
	value, exists := c.userFailedLoginInfo[userKey]
	c.userFailedLoginInfoLock.Unlock()
	if exists {
		return value
	}
	return nil
}

// LocalUpdateUserFailedLoginInfo updates the failed login information for a user based on alias name and mountAccessor
func (c *Core) LocalUpdateUserFailedLoginInfo(ctx context.Context, userKey FailedLoginUser, failedLoginInfo *FailedLoginInfo, deleteEntry bool) error {
	c.userFailedLoginInfoLock.Lock()
	defer c.userFailedLoginInfoLock.Unlock()
	switch deleteEntry {
	case false:
		// update entry in the map
		c.userFailedLoginInfo[userKey] = failedLoginInfo

		// get the user lockout configuration for the user
		mountEntry := c.router.MatchingMountByAccessor(userKey.mountAccessor)
		if mountEntry == nil {
			mountEntry = &MountEntry{NamespaceID: "root"}
		}
		userLockoutConfiguration := c.getUserLockoutConfiguration(mountEntry)

		// if failed login count has reached threshold, create a storage entry as the user got locked
		if failedLoginInfo.count >= uint(userLockoutConfiguration.LockoutThreshold) {
			// user locked
			storageUserLockoutPath := fmt.Sprintf(coreLockedUsersPath+"%s/%s/%s", mountEntry.NamespaceID, userKey.mountAccessor, userKey.aliasName)

			compressedBytes, err := json.Marshal(failedLoginInfo.lastFailedLoginTime)
			if err != nil {
				return err
			}

			// Write to the physical backend
			if err := c.barrier.Put(ctx, &StorageEntry{Key: storageUserLockoutPath, Value: compressedBytes}); err != nil {
				return err
			}
		}

	default:
		// delete the entry from the map, if no key exists it is no-op
		delete(c.userFailedLoginInfo, userKey)
	}
	return nil
}

// isUserLocked is asked before a login request is routed.
func (c *Core) isUserLocked(ctx context.Context, userKey FailedLoginUser) bool {
	info := c.LocalGetUserFailedLoginInfo(ctx, userKey)
	return info != nil && info.count >= 5
}

// failedUserLoginProcess runs after a login request failed authentication.
func (c *Core) failedUserLoginProcess(ctx context.Context, userKey FailedLoginUser) error {
	info := c.LocalGetUserFailedLoginInfo(ctx, userKey)
	updated := &FailedLoginInfo{count: 1, lastFailedLoginTime: int(time.Now().Unix())}
	if info != nil {
		updated.count = info.count + 1
	}
	return c.LocalUpdateUserFailedLoginInfo(ctx, userKey, updated, false)
}

// handleLoginRequest is the lockout part of Core.handleLoginRequest.
func (c *Core) handleLoginRequest(ctx context.Context, user FailedLoginUser, password string) error {
	if c.isUserLocked(ctx, user) {
		return errors.New("permission denied: user locked")
	}
	if password != "s3cret" {
		if err := c.failedUserLoginProcess(ctx, user); err != nil {
			return fmt.Errorf("failed to update the user failed login information: %w", err)
		}
		return errors.New("invalid credentials")
	}
	return nil
}

// ---- harness ----

type sealedBarrier struct{}

func (sealedBarrier) Put(ctx context.Context, entry *StorageEntry) error { return ErrBarrierSealed }

func main() {
	c := &Core{
		router:              &Router{mounts: map[string]*MountEntry{"auth_userpass_1": {Accessor: "auth_userpass_1", NamespaceID: "root"}}},
		barrier:             sealedBarrier{},
		userFailedLoginInfo: map[FailedLoginUser]*FailedLoginInfo{},
	}
	alice := FailedLoginUser{aliasName: "alice", mountAccessor: "auth_userpass_1"}
	c.userFailedLoginInfo[alice] = &FailedLoginInfo{count: 4}

	done := make(chan error)
	go func() { done <- c.handleLoginRequest(context.Background(), alice, "guess") }()
	fmt.Println("login 1:", <-done)
	bob := FailedLoginUser{aliasName: "bob", mountAccessor: "auth_userpass_1"}
	go func() { done <- c.handleLoginRequest(context.Background(), bob, "s3cret") }()
	fmt.Println("login 2:", <-done)
}
