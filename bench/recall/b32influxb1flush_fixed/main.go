// Project: InfluxDB 0.9.x (tsdb/engine/b1/b1.go on top of github.com/boltdb/bolt)
// Issue: influxdata/influxdb PR #4913 "Fix flush deadlock" (b1 engine, 2015-11)
// Fixed twin (PR #4913): FlushPartition takes e.mu inside the bolt Update
// callback (bolt first, then engine, like queries) and locks again to reset the cache.
//
// Lock order inversion between the b1 Engine's RWMutex and bolt's mmap lock.
// A query opens a read transaction through Engine.Begin -> bolt DB.Begin,
// which read-locks db.mmaplock for the life of the transaction, and later
// builds a cursor with Tx.Cursor, which read-locks the engine (line 698) to
// copy the in-memory WAL cache. A WAL flush runs Engine.FlushPartition, which
// takes the engine's write lock first (line 626) and then runs a bolt write
// transaction; when the flushed points no longer fit the mapped file, the
// commit goes DB.allocate -> DB.mmap and write-locks db.mmaplock (line 218),
// which waits for the query's read transaction. The flusher holds e.mu and
// waits for mmaplock; the query holds mmaplock and waits for e.mu.
//
// main writes points into the WAL, opens a query transaction, runs a flush in
// another goroutine until its commit is parked on the mmap lock, then asks
// the query transaction for a cursor.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// ===================== github.com/boltdb/bolt (trimmed) =====================

const (
	defaultPageSize = 4096
	minMmapSize     = 1 << 15 // 32KB
)

var (
	ErrTxClosed      = errors.New("tx closed")
	ErrTxNotWritable = errors.New("tx not writable")
	ErrBucketExists  = errors.New("bucket already exists")
)

type pgid uint64

type meta struct {
	pgid pgid
	txid uint64
}

// boltDB is bolt.DB.
type boltDB struct {
	pageSize int

	rwlock   sync.Mutex   // Allows only one writer at a time.
	metalock sync.Mutex   // Protects meta page access.
	mmaplock sync.RWMutex // Protects mmap access during remapping.

	datasz int
	meta   *meta
	// data is the committed B+tree, here flattened to bucket path -> key -> value.
	data map[string]map[string][]byte

	rwtx *boltTx
	txs  []*boltTx
}

func boltOpen() *boltDB {
	return &boltDB{
		pageSize: defaultPageSize,
		datasz:   minMmapSize,
		meta:     &meta{pgid: 4},
		data:     map[string]map[string][]byte{},
	}
}

// Begin starts a new transaction.
func (db *boltDB) Begin(writable bool) (*boltTx, error) {
	if writable {
		return db.beginRWTx()
	}
	return db.beginTx()
}

func (db *boltDB) beginTx() (*boltTx, error) {
	// Lock the meta pages while we initialize the transaction. We obtain
	// the meta lock before the mmap lock because that's the order that the
	// write transaction will obtain them.
	db.metalock.Lock()

	// Obtain a read-only lock on the mmap. When the mmap is remapped it will
	// obtain a write lock so all transactions must finish before it can be
	// remapped.
	db.mmaplock.RLock()

	// Create a transaction associated with the database.
	t := &boltTx{}
	t.init(db)

	// Keep track of transaction until it closes.
	db.txs = append(db.txs, t)

	// Unlock the meta pages.
	db.metalock.Unlock()
	return t, nil
}

func (db *boltDB) beginRWTx() (*boltTx, error) {
	// Obtain writer lock. This is released by the transaction when it closes.
	// This enforces only one writer transaction at a time.
	db.rwlock.Lock()

	// Once we have the writer lock then we can lock the meta pages so that
	// we can set up the transaction.
	db.metalock.Lock()
	defer db.metalock.Unlock()

	// Create a transaction associated with the database.
	t := &boltTx{writable: true}
	t.init(db)
	db.rwtx = t
	return t, nil
}

// removeTx removes a transaction from the database.
func (db *boltDB) removeTx(tx *boltTx) {
	// Release the read lock on the mmap.
	db.mmaplock.RUnlock()

	// Use the meta lock to restrict access to the DB object.
	db.metalock.Lock()
	for i, t := range db.txs {
		if t == tx {
			db.txs = append(db.txs[:i], db.txs[i+1:]...)
			break
		}
	}
	db.metalock.Unlock()
}

// Update executes a function within the context of a read-write managed transaction.
func (db *boltDB) Update(fn func(*boltTx) error) error {
	t, err := db.Begin(true)
	if err != nil {
		return err
	}

	// Make sure the transaction rolls back in the event of a panic.
	defer func() {
		if t.db != nil {
			t.rollback()
		}
	}()

	// Mark as a managed tx so that the inner function cannot manually commit.
	t.managed = true

	// If an error is returned from the function then rollback and return error.
	err = fn(t)
	t.managed = false
	if err != nil {
		_ = t.Rollback()
		return err
	}

	return t.Commit()
}

// View executes a function within the context of a managed read-only transaction.
func (db *boltDB) View(fn func(*boltTx) error) error {
	t, err := db.Begin(false)
	if err != nil {
		return err
	}

	// Make sure the transaction rolls back in the event of a panic.
	defer func() {
		if t.db != nil {
			t.rollback()
		}
	}()

	// Mark as a managed tx so that the inner function cannot manually rollback.
	t.managed = true

	// If an error is returned from the function then pass it through.
	err = fn(t)
	t.managed = false
	if err != nil {
		_ = t.Rollback()
		return err
	}

	return t.Rollback()
}

// allocate returns a contiguous block of memory starting at a given page.
func (db *boltDB) allocate(count int) error {
	// Resize mmap() if we're at the end.
	id := db.rwtx.meta.pgid
	var minsz = int((id+pgid(count))+1) * db.pageSize
	if minsz >= db.datasz {
		if err := db.mmap(minsz); err != nil {
			return fmt.Errorf("mmap allocate error: %s", err)
		}
	}

	// Move the page id high water mark.
	db.rwtx.meta.pgid += pgid(count)
	return nil
}

// mmap opens the underlying memory-mapped file and initializes the meta references.
// minsz is the minimum size that the new mmap can be.
func (db *boltDB) mmap(minsz int) error {
	db.mmaplock.Lock()
	defer db.mmaplock.Unlock()

	size := db.datasz
	for size < minsz {
		size *= 2
	}
	db.datasz = size
	return nil
}

// boltTx is bolt.Tx.
type boltTx struct {
	writable bool
	managed  bool
	db       *boltDB
	meta     *meta
	buckets  map[string]map[string][]byte
	seqs     map[string]uint64
	dirty    map[string]bool
}

func (tx *boltTx) init(db *boltDB) {
	tx.db = db
	m := *db.meta
	tx.meta = &m
	tx.buckets = db.data
	if tx.writable {
		// Copy-on-write: the writer works on its own copy of the tree.
		tx.buckets = make(map[string]map[string][]byte, len(db.data))
		for p, b := range db.data {
			nb := make(map[string][]byte, len(b))
			for k, v := range b {
				nb[k] = v
			}
			tx.buckets[p] = nb
		}
		tx.seqs = map[string]uint64{}
		tx.dirty = map[string]bool{}
		tx.meta.txid++
	}
}

// Bucket retrieves a top-level bucket by name.
func (tx *boltTx) Bucket(name []byte) *boltBucket {
	if _, ok := tx.buckets[string(name)]; !ok {
		return nil
	}
	return &boltBucket{tx: tx, path: string(name)}
}

// CreateBucketIfNotExists creates a new top-level bucket if it doesn't already exist.
func (tx *boltTx) CreateBucketIfNotExists(name []byte) (*boltBucket, error) {
	return (&boltBucket{tx: tx}).CreateBucketIfNotExists(name)
}

// Size returns current database size in bytes as seen by this transaction.
func (tx *boltTx) Size() int64 {
	return int64(tx.meta.pgid) * int64(tx.db.pageSize)
}

// Commit writes all changes to disk.
func (tx *boltTx) Commit() error {
	if tx.db == nil {
		return ErrTxClosed
	} else if !tx.writable {
		return ErrTxNotWritable
	}

	// spill data onto dirty pages.
	if err := tx.spill(); err != nil {
		tx.rollback()
		return err
	}

	// Write meta to disk.
	tx.db.data = tx.buckets
	tx.db.meta = tx.meta

	// Finalize the transaction.
	tx.close()
	return nil
}

// spill writes every dirty bucket to newly allocated pages.
func (tx *boltTx) spill() error {
	names := make([]string, 0, len(tx.dirty))
	for p := range tx.dirty {
		names = append(names, p)
	}
	sort.Strings(names)
	// One page per dirty node.
	return tx.db.allocate(len(names))
}

// Rollback closes the transaction and ignores all previous updates.
func (tx *boltTx) Rollback() error {
	if tx.db == nil {
		return ErrTxClosed
	}
	tx.rollback()
	return nil
}

func (tx *boltTx) rollback() {
	if tx.db == nil {
		return
	}
	tx.close()
}

func (tx *boltTx) close() {
	if tx.db == nil {
		return
	}
	if tx.writable {
		// Remove transaction ref & writer lock.
		tx.db.rwtx = nil
		tx.db.rwlock.Unlock()
	} else {
		tx.db.removeTx(tx)
	}
	// Clear all references.
	tx.db = nil
}

// boltBucket is bolt.Bucket.
type boltBucket struct {
	tx   *boltTx
	path string
}

func (b *boltBucket) child(name []byte) string {
	if b.path == "" {
		return string(name)
	}
	return b.path + "/" + string(name)
}

// Bucket retrieves a nested bucket by name.
func (b *boltBucket) Bucket(name []byte) *boltBucket {
	p := b.child(name)
	if _, ok := b.tx.buckets[p]; !ok {
		return nil
	}
	return &boltBucket{tx: b.tx, path: p}
}

// CreateBucketIfNotExists creates a new bucket if it doesn't already exist.
func (b *boltBucket) CreateBucketIfNotExists(key []byte) (*boltBucket, error) {
	p := b.child(key)
	if _, ok := b.tx.buckets[p]; !ok {
		b.tx.buckets[p] = map[string][]byte{}
		b.tx.dirty[p] = true
		if b.path != "" {
			b.tx.dirty[b.path] = true
		}
	}
	return &boltBucket{tx: b.tx, path: p}, nil
}

// Get retrieves the value for a key in the bucket.
func (b *boltBucket) Get(key []byte) []byte { return b.tx.buckets[b.path][string(key)] }

// Put sets the value for a key in the bucket.
func (b *boltBucket) Put(key []byte, value []byte) error {
	b.tx.buckets[b.path][string(key)] = value
	b.tx.dirty[b.path] = true
	return nil
}

// NextSequence returns an autoincrementing integer for the bucket.
func (b *boltBucket) NextSequence() (uint64, error) {
	b.tx.seqs[b.path]++
	b.tx.dirty[b.path] = true
	return b.tx.seqs[b.path], nil
}

// ForEach executes a function for each nested bucket name.
func (b *boltBucket) ForEach(fn func(k, v []byte) error) error {
	var keys []string
	prefix := b.path + "/"
	for p := range b.tx.buckets {
		if strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], "/") {
			keys = append(keys, p[len(prefix):])
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn([]byte(k), nil); err != nil {
			return err
		}
	}
	return nil
}

// Cursor creates a cursor associated with the bucket.
func (b *boltBucket) Cursor() *boltCursor {
	keys := make([]string, 0, len(b.tx.buckets[b.path]))
	for k := range b.tx.buckets[b.path] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return &boltCursor{bucket: b, keys: keys, i: -1}
}

// boltCursor is bolt.Cursor.
type boltCursor struct {
	bucket *boltBucket
	keys   []string
	i      int
}

func (c *boltCursor) kv() ([]byte, []byte) {
	if c.i < 0 || c.i >= len(c.keys) {
		return nil, nil
	}
	k := c.keys[c.i]
	return []byte(k), c.bucket.tx.buckets[c.bucket.path][k]
}

func (c *boltCursor) First() ([]byte, []byte) { c.i = 0; return c.kv() }
func (c *boltCursor) Last() ([]byte, []byte)  { c.i = len(c.keys) - 1; return c.kv() }
func (c *boltCursor) Next() ([]byte, []byte)  { c.i++; return c.kv() }
func (c *boltCursor) Prev() ([]byte, []byte)  { c.i--; return c.kv() }
func (c *boltCursor) Seek(seek []byte) ([]byte, []byte) {
	c.i = sort.SearchStrings(c.keys, string(seek))
	return c.kv()
}

// Delete removes the current key/value under the cursor from the bucket.
func (c *boltCursor) Delete() error {
	k, _ := c.kv()
	delete(c.bucket.tx.buckets[c.bucket.path], string(k))
	c.bucket.tx.dirty[c.bucket.path] = true
	return nil
}

// ===================== influxdb models / tsdb (trimmed) =====================

type Point struct {
	key  []byte
	time time.Time
	data []byte
}

func (p *Point) Key() []byte     { return p.key }
func (p *Point) UnixNano() int64 { return p.time.UnixNano() }
func (p *Point) Data() []byte    { return p.data }

type FieldCodec struct{}

// tsdbTx is tsdb.Tx.
type tsdbTx interface {
	Cursor(series string, fields []string, dec *FieldCodec, ascending bool) *Cursor
	Size() int64
	Rollback() error
}

// ===================== tsdb/engine/b1/b1.go =====================

// WALPartitionN is the number of partitions in the write ahead log.
const WALPartitionN = 8

// WALPartition returns the partition number that key belongs to.
func WALPartition(key []byte) uint8 {
	h := fnv.New64a()
	h.Write(key)
	return uint8(h.Sum64() % WALPartitionN)
}

// ErrWALPartitionNotFound returns when flushing a partition that does not exist.
var ErrWALPartitionNotFound = errors.New("wal partition not found")

// Engine represents a version 1 storage engine.
type Engine struct {
	mu sync.RWMutex

	path string  // path to data file
	db   *boltDB // underlying database

	cache map[uint8]map[string][][]byte // values by <wal partition,series>

	walSize int // approximate size of the WAL, in bytes
}

// NewEngine returns a new instance of Engine.
func NewEngine(path string) *Engine {
	e := &Engine{path: path}

	// Initialize all partitions of the cache.
	e.cache = make(map[uint8]map[string][][]byte)
	for i := uint8(0); i < WALPartitionN; i++ {
		e.cache[i] = make(map[string][][]byte)
	}
	return e
}

// Open opens and initializes the engine.
func (e *Engine) Open() error {
	e.mu.Lock()
	defer e.mu.Unlock()

	// Open underlying storage.
	e.db = boltOpen()

	// Initialize data file.
	if err := e.db.Update(func(tx *boltTx) error {
		_, _ = tx.CreateBucketIfNotExists([]byte("series"))
		_, _ = tx.CreateBucketIfNotExists([]byte("fields"))
		_, _ = tx.CreateBucketIfNotExists([]byte("wal"))

		// Set file format, if not set yet.
		b, _ := tx.CreateBucketIfNotExists([]byte("meta"))
		if v := b.Get([]byte("format")); v == nil {
			if err := b.Put([]byte("format"), []byte("b1")); err != nil {
				return fmt.Errorf("set format: %s", err)
			}
		}

		return nil
	}); err != nil {
		return fmt.Errorf("init: %s", err)
	}
	return nil
}

// WritePoints will write the raw data points to the WAL and the in-memory cache.
func (e *Engine) WritePoints(points []*Point) error {
	// save to the underlying bolt instance
	if err := e.db.Update(func(tx *boltTx) error {
		// Write points to WAL bucket.
		wal := tx.Bucket([]byte("wal"))
		for _, p := range points {
			// Retrieve partition bucket.
			key := p.Key()
			b, err := wal.CreateBucketIfNotExists([]byte{WALPartition(key)})
			if err != nil {
				return fmt.Errorf("create WAL partition bucket: %s", err)
			}

			// Generate an autoincrementing index for the WAL partition.
			id, _ := b.NextSequence()

			// Append points sequentially to the WAL bucket.
			v := marshalWALEntry(key, p.UnixNano(), p.Data())
			if err := b.Put(u64tob(id), v); err != nil {
				return fmt.Errorf("put wal: %s", err)
			}
		}

		return nil
	}); err != nil {
		return err
	}

	// If successful then save points to in-memory cache.
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range points {
		// Generate in-memory cache entry of <timestamp,data>.
		key, data := p.Key(), p.Data()
		v := make([]byte, 8+len(data))
		binary.BigEndian.PutUint64(v[0:8], uint64(p.UnixNano()))
		copy(v[8:], data)

		partitionID := WALPartition(key)
		e.cache[partitionID][string(key)] = append(e.cache[partitionID][string(key)], v)

		// Calculate estimated WAL size.
		e.walSize += len(key) + len(v)
	}
	return nil
}

// Flush writes all points from the write ahead log to the index.
func (e *Engine) Flush(partitionFlushDelay time.Duration) error {
	// Retrieve a list of WAL buckets.
	var partitionIDs []uint8
	if err := e.db.View(func(tx *boltTx) error {
		return tx.Bucket([]byte("wal")).ForEach(func(key, _ []byte) error {
			partitionIDs = append(partitionIDs, uint8(key[0]))
			return nil
		})
	}); err != nil {
		return err
	}

	// Continue flushing until there are no more partition buckets.
	for _, partitionID := range partitionIDs {
		if err := e.FlushPartition(partitionID); err != nil {
			return fmt.Errorf("flush partition: id=%d, err=%s", partitionID, err)
		}

		// Wait momentarily so other threads can process.
		time.Sleep(partitionFlushDelay)
	}

	e.mu.Lock()
	defer e.mu.Unlock()

	// Reset WAL size.
	e.walSize = 0
	return nil
}

// FlushPartition flushes a single WAL partition.
func (e *Engine) FlushPartition(partitionID uint8) error {
	startTime := time.Now()

	var pointN int
	if err := e.db.Update(func(tx *boltTx) error {
		e.mu.Lock()
		defer e.mu.Unlock()

		// Retrieve partition bucket. Exit if it doesn't exist.
		pb := tx.Bucket([]byte("wal")).Bucket([]byte{byte(partitionID)})
		if pb == nil {
			return ErrWALPartitionNotFound
		}

		// Iterate over keys in the WAL partition bucket.
		c := pb.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			key, timestamp, data := unmarshalWALEntry(v)

			// Create bucket for entry.
			b, err := tx.CreateBucketIfNotExists(key)
			if err != nil {
				return fmt.Errorf("create bucket: %s", err)
			}

			// Write point to bucket.
			if err := b.Put(u64tob(uint64(timestamp)), data); err != nil {
				return fmt.Errorf("put: %s", err)
			}

			// Remove entry in the WAL.
			if err := c.Delete(); err != nil {
				return fmt.Errorf("delete: %s", err)
			}

			pointN++
		}

		return nil
	}); err != nil {
		return err
	}

	// Reset cache.
	e.mu.Lock()
	e.cache[partitionID] = make(map[string][][]byte)
	e.mu.Unlock()

	if pointN > 0 {
		fmt.Printf("[b1] flush %d points in %.3fs\n", pointN, time.Since(startTime).Seconds())
	}

	return nil
}

// Begin starts a new transaction on the engine.
func (e *Engine) Begin(writable bool) (tsdbTx, error) {
	tx, err := e.db.Begin(writable)
	if err != nil {
		return nil, err
	}
	return &Tx{boltTx: tx, engine: e}, nil
}

// Tx represents a transaction.
type Tx struct {
	*boltTx
	engine *Engine
}

// Cursor returns an iterator for a key over a single field.
func (tx *Tx) Cursor(series string, fields []string, dec *FieldCodec, ascending bool) *Cursor {
	// Retrieve series bucket.
	b := tx.Bucket([]byte(series))

	tx.engine.mu.RLock()
	defer tx.engine.mu.RUnlock()

	// Ignore if there is no bucket or points in the cache.
	partitionID := WALPartition([]byte(series))
	if b == nil && len(tx.engine.cache[partitionID][series]) == 0 {
		return nil
	}

	// Retrieve a copy of the in-cache points for the series.
	cache := make([][]byte, len(tx.engine.cache[partitionID][series]))
	copy(cache, tx.engine.cache[partitionID][series])

	// Build a cursor that merges the bucket and cache together.
	cur := &Cursor{
		cache:     cache,
		fields:    fields,
		dec:       dec,
		ascending: ascending,
	}
	if b != nil {
		cur.cursor = b.Cursor()
	}
	return cur
}

// Cursor provides ordered iteration across a series.
type Cursor struct {
	// Bolt cursor and readahead buffer.
	cursor *boltCursor

	// Fields and codec.
	fields []string
	dec    *FieldCodec

	// Cache and current cache index.
	cache [][]byte
	index int

	ascending bool
}

// Next returns the next key/value pair from the cache, then from bolt.
func (c *Cursor) Next() (key int64, value []byte) {
	if c.index < len(c.cache) {
		v := c.cache[c.index]
		c.index++
		return int64(binary.BigEndian.Uint64(v[0:8])), v[8:]
	}
	if c.cursor != nil {
		k, v := c.cursor.Next()
		if k != nil {
			return int64(btou64(k)), v
		}
	}
	return -1, nil
}

// marshalWALEntry encodes point data into a single byte slice.
func marshalWALEntry(key []byte, timestamp int64, data []byte) []byte {
	v := make([]byte, 8+4, 8+4+len(key)+len(data))
	binary.BigEndian.PutUint64(v[0:8], uint64(timestamp))
	binary.BigEndian.PutUint32(v[8:12], uint32(len(key)))

	v = append(v, key...)
	v = append(v, data...)

	return v
}

// unmarshalWALEntry decodes a WAL entry into it's separate parts.
func unmarshalWALEntry(v []byte) (key []byte, timestamp int64, data []byte) {
	timestamp = int64(binary.BigEndian.Uint64(v[0:8]))
	keyLen := binary.BigEndian.Uint32(v[8:12])
	key = v[12 : 12+keyLen]
	data = v[12+keyLen:]
	return
}

func u64tob(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func btou64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// goroutineParked reports whether some goroutine whose stack mentions fn is
// parked in one of the given wait states.
func goroutineParked(fn string, states ...string) bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if !strings.Contains(g, fn) {
			continue
		}
		hdr := g
		if i := strings.Index(g, "\n"); i >= 0 {
			hdr = g[:i]
		}
		for _, s := range states {
			if strings.Contains(hdr, "["+s) {
				return true
			}
		}
	}
	return false
}

func main() {
	e := NewEngine("/var/lib/influxdb/data/db0/default/1")
	if err := e.Open(); err != nil {
		panic(err)
	}

	// Eight series that hash to the same WAL partition.
	hosts := []string{"server00", "server08", "server17", "server22", "server31", "server39", "server44", "server53"}
	now := time.Unix(1448400000, 0)
	var points []*Point
	for i, h := range hosts {
		points = append(points, &Point{key: []byte("cpu,host=" + h), time: now.Add(time.Duration(i) * time.Second), data: bytes.Repeat([]byte{byte(i)}, 16)})
	}
	if err := e.WritePoints(points); err != nil {
		panic(err)
	}

	// A SELECT starts: it opens a read transaction on the shard.
	tx, err := e.Begin(false)
	if err != nil {
		panic(err)
	}

	// Meanwhile the WAL is flushed to the series buckets.
	flushed := make(chan error, 1)
	go func() { flushed <- e.Flush(0) }()
	for !goroutineParked("(*boltDB).mmap", "sync.RWMutex.Lock") {
		time.Sleep(time.Millisecond)
	}

	// The query builds its cursor.
	cur := tx.Cursor("cpu,host=server00", []string{"value"}, &FieldCodec{}, true)
	n := 0
	if cur != nil {
		for k, _ := cur.Next(); k != -1; k, _ = cur.Next() {
			n++
		}
	}
	tx.Rollback()
	fmt.Println("query read", n, "points; flush:", <-flushed)
}
