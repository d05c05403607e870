// Project: couchbase/sync_gateway (sync/replication server in front of
// Couchbase Server), 2.x line, January 2019.
// Files: db/change_cache.go (changeCache.DocChanged, processPrincipalDoc,
// unmarshalPrincipal), db/database.go (DatabaseContext.Authenticator, Close),
// db/change_listener.go (OnDocChanged), auth/auth.go (UnmarshalPrincipal).
// Issue: couchbase/sync_gateway#3898 "Avoid nested read locks on BucketLock".
//
// DatabaseContext.BucketLock guards the Bucket against teardown: readers take
// it to use the bucket, Close takes it for writing before it stops the feeds
// and drops the bucket. A _user or _role document arriving on the DCP feed
// reaches changeCache.DocChanged through the listener's OnDocChanged function
// value; processPrincipalDoc calls unmarshalPrincipal, which read-locks
// BucketLock to check the bucket is open and then calls Authenticator(), which
// read-locks BucketLock again. If the database is closed (taken offline,
// reconfigured, shut down) between the two read locks, Close waits for the
// feed goroutine and the nested RLock waits behind Close: the feed, the close
// and every later bucket reader hang. The fix removes the nested acquisition:
// unmarshalPrincipal no longer read-locks BucketLock around Authenticator().
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

const UserKeyPrefix, RoleKeyPrefix = "_sync:user:", "_sync:role:"

type Principal interface{ Sequence() uint64 }

type roleImpl struct {
	Name_     string `json:"name"`
	Sequence_ uint64 `json:"sequence"`
}

func (r *roleImpl) Sequence() uint64 { return r.Sequence_ }

type userImpl struct{ roleImpl } // plus password hash, roles, email...

type Bucket interface{ Close() }

type ChannelComputer interface {
	ComputeChannelsForPrincipal(Principal) ([]string, error)
}

type Authenticator struct {
	bucket            Bucket
	channelComputer   ChannelComputer
	sessionCookieName string
}

func NewAuthenticator(bucket Bucket, channelComputer ChannelComputer) *Authenticator {
	return &Authenticator{bucket: bucket, channelComputer: channelComputer, sessionCookieName: "SyncGatewaySession"}
}

func (auth *Authenticator) SetSessionCookieName(name string) { auth.sessionCookieName = name }

func (auth *Authenticator) UnmarshalPrincipal(data []byte, defaultName string, defaultSeq uint64, isUser bool) (Principal, error) {
	var princ Principal = &roleImpl{Name_: defaultName, Sequence_: defaultSeq}
	if isUser {
		princ = &userImpl{roleImpl: roleImpl{Name_: defaultName, Sequence_: defaultSeq}}
	}
	if err := json.Unmarshal(data, princ); err != nil {
		return nil, err
	}
	return princ, nil
}

type DocChangedFunc func(docID string, value []byte)

type changeListener struct {
	OnDocChanged DocChangedFunc
	terminator   chan struct{}
}

// ProcessFeedEvent is called by the DCP feed for every mutation.
func (listener *changeListener) ProcessFeedEvent(key string, value []byte) {
	listener.OnDocChanged(key, value)
}

func (listener *changeListener) Stop() { close(listener.terminator) }

type LogEntry struct {
	Sequence uint64
	DocID    string
}

type changeCache struct {
	context *DatabaseContext
	lock    sync.RWMutex
	entries []*LogEntry
}

// DocChanged is the listener's OnDocChanged callback.
func (c *changeCache) DocChanged(docID string, docJSON []byte) {
	if isUser := strings.HasPrefix(docID, UserKeyPrefix); isUser || strings.HasPrefix(docID, RoleKeyPrefix) {
		c.processPrincipalDoc(docID, docJSON, isUser) // regular documents are parsed and cached otherwise
	}
}

func (c *changeCache) unmarshalPrincipal(docJSON []byte, isUser bool) (Principal, error) {
	c.context.BucketLock.RLock()
	defer c.context.BucketLock.RUnlock()
	time.Sleep(50 * time.Millisecond) // feed goroutine preempted here
	if c.context.Bucket != nil {
		return c.context.Authenticator().UnmarshalPrincipal(docJSON, "", 0, isUser)
	}
	return nil, errors.New("Attempt to unmarshal principal using closed bucket")
}

func (c *changeCache) processPrincipalDoc(docID string, docJSON []byte, isUser bool) {
	// The cache needs user docs for their sequence numbers, so there are no gaps.
	princ, err := c.unmarshalPrincipal(docJSON, isUser)
	if princ == nil {
		fmt.Printf("changeCache: Error unmarshaling doc %q: %v\n", docID, err)
		return
	}
	c.processEntry(&LogEntry{Sequence: princ.Sequence(), DocID: docID})
}

func (c *changeCache) processEntry(change *LogEntry) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.entries = append(c.entries, change)
}

func (c *changeCache) Stop() {} // flushes and stops the cache's background tasks

type DatabaseContextOptions struct{ SessionCookieName string }

type DatabaseContext struct {
	Name             string
	Bucket           Bucket
	BucketLock       sync.RWMutex
	mutationListener changeListener
	changeCache      *changeCache
	Options          DatabaseContextOptions
}

func NewDatabaseContext(dbName string, bucket Bucket) *DatabaseContext {
	context := &DatabaseContext{Name: dbName, Bucket: bucket}
	context.changeCache = &changeCache{context: context}
	context.mutationListener = changeListener{terminator: make(chan struct{})}
	context.mutationListener.OnDocChanged = context.changeCache.DocChanged
	return context
}

func (context *DatabaseContext) ComputeChannelsForPrincipal(p Principal) ([]string, error) {
	return nil, nil
}

func (context *DatabaseContext) IsClosed() bool {
	context.BucketLock.RLock()
	defer context.BucketLock.RUnlock()
	return context.Bucket == nil
}

func (context *DatabaseContext) Authenticator() *Authenticator {
	context.BucketLock.RLock()
	defer context.BucketLock.RUnlock()
	// Authenticators are lightweight & stateless, so it's OK to return a new one every time
	authenticator := NewAuthenticator(context.Bucket, context)
	if context.Options.SessionCookieName != "" {
		authenticator.SetSessionCookieName(context.Options.SessionCookieName)
	}
	return authenticator
}

func (context *DatabaseContext) Close() {
	context.BucketLock.Lock()
	defer context.BucketLock.Unlock()
	context.mutationListener.Stop()
	context.changeCache.Stop()
	context.Bucket.Close()
	context.Bucket = nil
}

type couchbaseBucket struct{ name string }

func (b *couchbaseBucket) Close() {}

func main() {
	db := NewDatabaseContext("travel-sample", &couchbaseBucket{name: "travel-sample"})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // DCP feed worker
		defer wg.Done()
		db.mutationListener.ProcessFeedEvent(UserKeyPrefix+"alice", []byte(`{"name":"alice","sequence":4211}`))
	}()
	time.Sleep(10 * time.Millisecond)
	go func() { defer wg.Done(); db.Close() }() // _offline or a config reload closes the context
	wg.Wait()
	fmt.Println("cached principal sequences:", len(db.changeCache.entries), "closed:", db.IsClosed())
}
