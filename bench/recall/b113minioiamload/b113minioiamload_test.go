// Project: minio/minio (cmd/iam-store.go IAMStoreSys, cmd/iam-object-store.go IAMObjectStore lock/unlock/rlock, cmd/iam.go IAMSys.LoadPolicyMapping and IsAllowed, cmd/peer-rest-server.go), RELEASE.2022-05, fixed late May 2022.
// Bug: the IAM cache is guarded by the store RWMutex behind the lock()/unlock() and rlock()/runlock() methods of the IAMStorageAPI interface. When a site-replicated policy mapping is propagated to the nodes of a cluster, each node reloads it through IAMSys.LoadPolicyMapping and IAMStoreSys.PolicyMappingNotificationHandler, which write-locks the cache, reads the mapping back from the backend and unlocks by hand; when the read fails with an error other than "no such policy" (read quorum lost, etcd timeout) the handler returns without unlocking, so every later request authorization (IsAllowed, PolicyDBGet, which take rlock) blocks forever and IAM freezes (PR #14990 "site-repl: Fix deadlock after an IAM loading error", "Fix forgotten IAM cache lock releases when reading some data from disk/etcd"; the handler shown is reconstructed, approximate).
package b113minioiamload

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	errInvalidArgument      = errors.New("invalid arguments specified")
	errNoSuchPolicy         = errors.New("specified canned policy not found")
	errConfigNotFound       = errors.New("config file not found")
	errErasureReadQuorum    = errors.New("read failed, insufficient number of drives online")
	errServerNotInitialized = errors.New("server not initialized, please try again")
)

type IAMUserType int

const (
	regUser IAMUserType = iota
	stsUser
)

type UsersSysType string

const (
	MinIOUsersSysType UsersSysType = "MinIOUsersSys"
	LDAPUsersSysType  UsersSysType = "LDAPUsersSys"
)

type MappedPolicy struct {
	Version   int       `json:"version"`
	Policies  string    `json:"policy"`
	UpdatedAt time.Time `json:"updatedAt,omitempty"`
}

func (mp MappedPolicy) toSlice() []string {
	return strings.FieldsFunc(mp.Policies, func(r rune) bool { return r == ',' })
}

// iamCache contains in-memory cache of IAM data.
type iamCache struct {
	updatedAt         time.Time
	iamUserPolicyMap  map[string]MappedPolicy
	iamGroupPolicyMap map[string]MappedPolicy
	iamSTSPolicyMap   map[string]MappedPolicy
}

func newIamCache() *iamCache {
	return &iamCache{iamUserPolicyMap: map[string]MappedPolicy{}, iamGroupPolicyMap: map[string]MappedPolicy{}, iamSTSPolicyMap: map[string]MappedPolicy{}}
}

// IAMStorageAPI defines an interface for the IAM persistence layer.
type IAMStorageAPI interface {
	lock() *iamCache
	unlock()
	rlock() *iamCache
	runlock()
	getUsersSysType() UsersSysType
	loadMappedPolicy(ctx context.Context, name string, userType IAMUserType, isGroup bool, m map[string]MappedPolicy) error
}

// ObjectLayer is the erasure-coded object layer holding .minio.sys/config.
type ObjectLayer interface {
	GetObject(ctx context.Context, bucket, object string) ([]byte, error)
}

type erasureObjects struct {
	objects map[string][]byte
	offline map[string]bool
}

func (er *erasureObjects) GetObject(ctx context.Context, bucket, object string) ([]byte, error) {
	if er.offline[object] {
		return nil, errErasureReadQuorum
	}
	data, ok := er.objects[object]
	if !ok {
		return nil, errConfigNotFound
	}
	return data, nil
}

// IAMObjectStore implements IAMStorageAPI on top of the object layer.
type IAMObjectStore struct {
	// Protect access to storage within the current server.
	sync.RWMutex
	*iamCache
	usersSysType UsersSysType
	objAPI       ObjectLayer
}

func (iamOS *IAMObjectStore) lock() *iamCache               { iamOS.Lock(); return iamOS.iamCache }
func (iamOS *IAMObjectStore) unlock()                       { iamOS.Unlock() }
func (iamOS *IAMObjectStore) rlock() *iamCache              { iamOS.RLock(); return iamOS.iamCache }
func (iamOS *IAMObjectStore) runlock()                      { iamOS.RUnlock() }
func (iamOS *IAMObjectStore) getUsersSysType() UsersSysType { return iamOS.usersSysType }

func getMappedPolicyPath(name string, userType IAMUserType, isGroup bool) string {
	switch {
	case isGroup:
		return "config/iam/policydb/groups/" + name + ".json"
	case userType == stsUser:
		return "config/iam/policydb/sts-users/" + name + ".json"
	}
	return "config/iam/policydb/users/" + name + ".json"
}

func (iamOS *IAMObjectStore) loadIAMConfig(ctx context.Context, item interface{}, objPath string) error {
	data, err := iamOS.objAPI.GetObject(ctx, ".minio.sys", objPath)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, item)
}

func (iamOS *IAMObjectStore) loadMappedPolicy(ctx context.Context, name string, userType IAMUserType, isGroup bool, m map[string]MappedPolicy) error {
	var p MappedPolicy
	err := iamOS.loadIAMConfig(ctx, &p, getMappedPolicyPath(name, userType, isGroup))
	if err != nil {
		if err == errConfigNotFound {
			return errNoSuchPolicy
		}
		return err
	}
	m[name] = p
	return nil
}

// IAMStoreSys contains IAMStorageAPI to add higher-level methods on the storage layer.
type IAMStoreSys struct {
	IAMStorageAPI
}

// PolicyMappingNotificationHandler - handles updating a policy mapping from storage.
func (store *IAMStoreSys) PolicyMappingNotificationHandler(ctx context.Context, userOrGroup string, isGroup bool, userType IAMUserType) error {
	if userOrGroup == "" {
		return errInvalidArgument
	}

	cache := store.lock()
	var m map[string]MappedPolicy
	switch {
	case isGroup:
		m = cache.iamGroupPolicyMap
	case userType == stsUser:
		m = cache.iamSTSPolicyMap
	default:
		m = cache.iamUserPolicyMap
	}
	err := store.loadMappedPolicy(ctx, userOrGroup, userType, isGroup, m)
	if errors.Is(err, errNoSuchPolicy) {
		// This means that the policy mapping was deleted, so we update
		// the cache.
		delete(m, userOrGroup)
		cache.updatedAt = time.Now()
		store.unlock()
		return nil
	}
	if err != nil {
		return err
	}
	cache.updatedAt = time.Now()
	store.unlock()
	return nil
}

// PolicyDBGet - fetches policies associated with the given user or group.
func (store *IAMStoreSys) PolicyDBGet(name string, isGroup bool, groups ...string) ([]string, error) {
	if name == "" {
		return nil, errInvalidArgument
	}
	cache := store.rlock()
	defer store.runlock()

	var policies []string
	if isGroup {
		policies = cache.iamGroupPolicyMap[name].toSlice()
	} else {
		policies = cache.iamUserPolicyMap[name].toSlice()
	}
	for _, g := range groups {
		policies = append(policies, cache.iamGroupPolicyMap[g].toSlice()...)
	}
	return policies, nil
}

// IAMSys - config system.
type IAMSys struct {
	usersSysType UsersSysType
	store        *IAMStoreSys
	initialized  bool
}

// LoadPolicyMapping - loads the mapped policy for a user or group from storage
// into server memory (peer notification after a site-replicated change).
func (sys *IAMSys) LoadPolicyMapping(ctx context.Context, userOrGroup string, userType IAMUserType, isGroup bool) error {
	if !sys.initialized {
		return errServerNotInitialized
	}
	// In case of LDAP, policy mappings are only applicable to sts users.
	if sys.usersSysType == LDAPUsersSysType && userType == regUser {
		userType = stsUser
	}
	return sys.store.PolicyMappingNotificationHandler(ctx, userOrGroup, isGroup, userType)
}

// Args is policy.Args.
type Args struct {
	AccountName, Action, BucketName string
	Groups                          []string
}

// IsAllowed - checks given policy args is allowed to continue the Rest API.
func (sys *IAMSys) IsAllowed(args Args) bool {
	policies, err := sys.store.PolicyDBGet(args.AccountName, false, args.Groups...)
	if err != nil {
		return false
	}
	for _, p := range policies {
		if p == "readwrite" || (p == "readonly" && strings.HasPrefix(args.Action, "s3:Get")) {
			return true
		}
	}
	return false
}

// peerRESTServer receives the LoadPolicyMapping notification from the node
// that applied the site replication change.
type peerRESTServer struct{ iam *IAMSys }

func (s *peerRESTServer) LoadPolicyMappingHandler(userOrGroup string, userType IAMUserType, isGroup bool) error {
	return s.iam.LoadPolicyMapping(context.Background(), userOrGroup, userType, isGroup)
}

func TestB113minioiamload(t *testing.T) {
	alice, _ := json.Marshal(MappedPolicy{Version: 1, Policies: "readwrite"})
	objAPI := &erasureObjects{objects: map[string][]byte{"config/iam/policydb/users/alice.json": alice}, offline: map[string]bool{}}
	store := &IAMStoreSys{&IAMObjectStore{iamCache: newIamCache(), usersSysType: MinIOUsersSysType, objAPI: objAPI}}
	sys := &IAMSys{usersSysType: MinIOUsersSysType, store: store, initialized: true}
	peer := &peerRESTServer{iam: sys}

	if err := peer.LoadPolicyMappingHandler("alice", regUser, false); err != nil {
		t.Fatal(err)
	}

	// A drive goes offline while another site replicates a new mapping for bob.
	bob, _ := json.Marshal(MappedPolicy{Version: 1, Policies: "readonly"})
	objAPI.objects["config/iam/policydb/users/bob.json"] = bob
	objAPI.offline["config/iam/policydb/users/bob.json"] = true
	if err := peer.LoadPolicyMappingHandler("bob", regUser, false); !errors.Is(err, errErasureReadQuorum) {
		t.Fatalf("load: %v", err)
	}

	allowed := make(chan bool)
	go func() {
		// The next S3 request from alice is authorized.
		allowed <- sys.IsAllowed(Args{AccountName: "alice", Action: "s3:PutObject", BucketName: "photos"})
	}()
	if !<-allowed {
		t.Fatal("alice denied")
	}
}
