// Fixed twin: the badger v1.5 Item.Value API (value passed to a callback,
// read lock released when it returns) instead of a lock held until Discard.
// Shape of dgraph-io/badger issue #418 ("Read/Write transactions deadlocked
// when 00000.vlog reaches limit"), badger v1.x: valueLog.Read read-locks the
// log file and returns its RUnlock as a callback; Item.Value queues that
// callback on the transaction, so the read lock lives until Txn.Discard. When
// the writer fills the file it calls logFile.doneWriting, which write-locks
// the file; the same transaction's next Item.Value read-locks it again and
// queues behind the writer.
package main

import (
	"fmt"
	"sync"
	"time"
)

const maxFileSize = 1 << 10

type valuePointer struct {
	Fid    uint32
	Len    uint32
	Offset uint32
}

type logFile struct {
	lock sync.RWMutex
	fid  uint32
	data []byte
	done bool
}

func (lf *logFile) read(p valuePointer) []byte {
	return lf.data[p.Offset : p.Offset+p.Len]
}

// doneWriting syncs and truncates a full file before a new one is opened.
func (lf *logFile) doneWriting() {
	time.Sleep(10 * time.Millisecond) // fsync outside the lock
	lf.lock.Lock()
	defer lf.lock.Unlock()
	lf.data = lf.data[:len(lf.data):len(lf.data)] // truncate and remap read-only
	lf.done = true
}

type valueLog struct {
	filesLock sync.RWMutex
	filesMap  map[uint32]*logFile
	maxFid    uint32
}

func (vlog *valueLog) getFileRLocked(fid uint32) (*logFile, error) {
	vlog.filesLock.RLock()
	defer vlog.filesLock.RUnlock()
	lf, ok := vlog.filesMap[fid]
	if !ok {
		return nil, fmt.Errorf("file with ID %d not found", fid)
	}
	lf.lock.RLock()
	return lf, nil
}

func (vlog *valueLog) getUnlockCallback(lf *logFile) func() {
	return lf.lock.RUnlock
}

// Read returns the value and a callback that must be run when the caller
// is done with the returned slice.
func (vlog *valueLog) Read(vp valuePointer) ([]byte, func(), error) {
	lf, err := vlog.getFileRLocked(vp.Fid)
	if err != nil {
		return nil, nil, err
	}
	return lf.read(vp), vlog.getUnlockCallback(lf), nil
}

// write runs on the single writer goroutine.
func (vlog *valueLog) write(vals [][]byte) []valuePointer {
	vlog.filesLock.RLock()
	cur := vlog.filesMap[vlog.maxFid]
	vlog.filesLock.RUnlock()
	var ptrs []valuePointer
	for _, v := range vals {
		ptrs = append(ptrs, valuePointer{Fid: cur.fid, Len: uint32(len(v)), Offset: uint32(len(cur.data))})
		cur.data = append(cur.data, v...)
	}
	if len(cur.data) > maxFileSize {
		cur.doneWriting()
		vlog.filesLock.Lock()
		vlog.maxFid++
		vlog.filesMap[vlog.maxFid] = &logFile{fid: vlog.maxFid}
		vlog.filesLock.Unlock()
	}
	return ptrs
}

type DB struct {
	vlog  *valueLog
	index map[string]valuePointer
	mu    sync.Mutex
}

type Item struct {
	txn *Txn
	key string
	vp  valuePointer
}

type Txn struct {
	db        *DB
	callbacks []func()
}

func (txn *Txn) Get(key string) (*Item, error) {
	txn.db.mu.Lock()
	defer txn.db.mu.Unlock()
	vp, ok := txn.db.index[key]
	if !ok {
		return nil, fmt.Errorf("key %q not found", key)
	}
	return &Item{txn: txn, key: key, vp: vp}, nil
}

func runCallback(cb func()) {
	if cb != nil {
		cb()
	}
}

// Value calls fn with the value; the value is only valid inside fn, and the
// log file's read lock is released as soon as fn returns.
func (item *Item) Value(fn func(val []byte) error) error {
	buf, cb, err := item.txn.db.vlog.Read(item.vp)
	defer runCallback(cb)
	if err != nil {
		return err
	}
	return fn(buf)
}

func (txn *Txn) Discard() {
	for _, cb := range txn.callbacks {
		cb()
	}
	txn.callbacks = nil
}

func (db *DB) View(fn func(txn *Txn) error) error {
	txn := &Txn{db: db}
	defer txn.Discard()
	return fn(txn)
}

func (db *DB) writeRequests(keys []string, vals [][]byte) {
	ptrs := db.vlog.write(vals)
	db.mu.Lock()
	for i, k := range keys {
		db.index[k] = ptrs[i]
	}
	db.mu.Unlock()
}

func main() {
	db := &DB{vlog: &valueLog{filesMap: map[uint32]*logFile{0: {fid: 0}}}, index: map[string]valuePointer{}}
	db.writeRequests([]string{"dict:1", "dict:2"}, [][]byte{make([]byte, 300), make([]byte, 300)})

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the writer goroutine: a large batch fills 000000.vlog
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		db.writeRequests([]string{"blob"}, [][]byte{make([]byte, 600)})
	}()

	err := db.View(func(txn *Txn) error {
		for _, k := range []string{"dict:1", "dict:2"} {
			item, err := txn.Get(k)
			if err != nil {
				return err
			}
			err = item.Value(func(v []byte) error {
				time.Sleep(100 * time.Millisecond) // decode the dictionary
				fmt.Println(k, len(v))
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	wg.Wait()
	fmt.Println("view done:", err)
}
