// Project: moby/moby libnetwork (bitseq/sequence.go, datastore/datastore.go, used by ipam/allocator.go and idm), Docker 1.9/1.10 development, late 2015 (approximate).
// Bug: Handle.set held the handle's embedded mutex while it refreshed the handle from the datastore with store.GetObject(key, h), and GetObject calls back into the KVObject methods SetValue (through UnmarshalJSON and FromByteArray) and SetIndex, which lock the same handle, so the first address or VNI allocation on a network backed by a persistent store hung forever. The fix releases the lock around GetObject ("The lock is acquired in the GetObject") and takes it back afterwards.
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

var (
	ErrKeyNotFound = errors.New("key not found in store")
	ErrKeyModified = errors.New("unable to complete atomic operation, key modified")
)

type KVObject interface {
	Key() []string
	Value() []byte
	SetValue([]byte) error
	Index() uint64
	SetIndex(uint64)
	Exists() bool
}

type KVPair struct {
	Value     []byte
	LastIndex uint64
}

type DataStore interface {
	GetObject(key string, o KVObject) error
	PutObjectAtomic(kvObject KVObject) error
}

// datastore implements DataStore; kv stands in for the libkv backend (boltdb, consul, etcd).
type datastore struct {
	mu sync.Mutex
	kv map[string]KVPair
}

func Key(key ...string) string { return "docker/network/v1.0/" + strings.Join(key, "/") + "/" }

func (ds *datastore) GetObject(key string, o KVObject) error {
	ds.mu.Lock()
	kvPair, ok := ds.kv[key]
	ds.mu.Unlock()
	if !ok {
		return ErrKeyNotFound
	}
	if err := o.SetValue(kvPair.Value); err != nil {
		return err
	}
	// Make sure the object has a correct view of the DB index.
	o.SetIndex(kvPair.LastIndex)
	return nil
}

func (ds *datastore) PutObjectAtomic(kvObject KVObject) error {
	key, exists, index, value := Key(kvObject.Key()...), kvObject.Exists(), kvObject.Index(), kvObject.Value()
	ds.mu.Lock()
	cur, ok := ds.kv[key]
	if ok != exists || (ok && cur.LastIndex != index) {
		ds.mu.Unlock()
		return ErrKeyModified
	}
	ds.kv[key] = KVPair{Value: value, LastIndex: cur.LastIndex + 1}
	ds.mu.Unlock()
	kvObject.SetIndex(cur.LastIndex + 1)
	return nil
}

// Handle contains the sequence representing the bitmask and its identifier.
type Handle struct {
	bits       uint64
	unselected uint64
	head       []byte // one byte per 8 ordinals (run-length sequence in the real code)
	app        string
	id         string
	dbIndex    uint64
	dbExists   bool
	store      DataStore
	sync.Mutex
}

func NewHandle(app string, ds DataStore, id string, numElements uint64) (*Handle, error) {
	h := &Handle{app: app, id: id, store: ds, bits: numElements, unselected: numElements, head: make([]byte, (numElements+7)/8)}
	if err := h.store.GetObject(Key(h.Key()...), h); err != nil && err != ErrKeyNotFound {
		return nil, err
	}
	if !h.Exists() {
		if err := h.writeToStore(); err != nil {
			return nil, fmt.Errorf("failed to write bitsequence to store: %v", err)
		}
	}
	return h, nil
}

func (h *Handle) Key() []string               { return []string{"bitseq", h.app, h.id} }
func (h *Handle) Value() []byte               { b, _ := json.Marshal(h); return b }
func (h *Handle) SetValue(value []byte) error { return json.Unmarshal(value, h) }
func (h *Handle) Index() uint64               { h.Lock(); defer h.Unlock(); return h.dbIndex }
func (h *Handle) SetIndex(index uint64)       { h.Lock(); h.dbIndex, h.dbExists = index, true; h.Unlock() }
func (h *Handle) Exists() bool                { h.Lock(); defer h.Unlock(); return h.dbExists }

// FromByteArray reconstructs the bitmask from its serialized form.
func (h *Handle) FromByteArray(ba []byte) error {
	h.Lock()
	defer h.Unlock()
	h.bits, h.unselected = binary.BigEndian.Uint64(ba[0:8]), binary.BigEndian.Uint64(ba[8:16])
	h.head = append([]byte(nil), ba[16:]...)
	return nil
}

func (h *Handle) MarshalJSON() ([]byte, error) {
	h.Lock()
	ba := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, h.bits), h.unselected)
	m := map[string]interface{}{"id": h.id, "sequence": append(ba, h.head...)}
	h.Unlock()
	return json.Marshal(m)
}

func (h *Handle) UnmarshalJSON(data []byte) error {
	var m struct {
		ID       string `json:"id"`
		Sequence []byte `json:"sequence"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	h.id = m.ID
	return h.FromByteArray(m.Sequence)
}

func (h *Handle) getCopy() *Handle {
	return &Handle{bits: h.bits, unselected: h.unselected, head: append([]byte(nil), h.head...), app: h.app, id: h.id, dbIndex: h.dbIndex, dbExists: h.dbExists, store: h.store}
}

func (h *Handle) writeToStore() error {
	h.Lock()
	store := h.store
	h.Unlock()
	return store.PutObjectAtomic(h)
}

func (h *Handle) SetAny() (uint64, error) { return h.set(0, h.bits-1) }

func (h *Handle) set(start, end uint64) (uint64, error) {
	for {
		h.Lock()
		store := h.store
		if store != nil {
			h.Unlock() // The lock is acquired in the GetObject
			if err := store.GetObject(Key(h.Key()...), h); err != nil && err != ErrKeyNotFound {
				return 0, err
			}
			h.Lock() // Acquire the lock back
		}
		ret := start
		for ret <= end && h.head[ret/8]&(1<<(ret%8)) != 0 {
			ret++
		}
		if ret > end {
			h.Unlock()
			return 0, errors.New("no bit available")
		}
		nh := h.getCopy()
		nh.head[ret/8] |= 1 << (ret % 8)
		nh.unselected--
		h.Unlock()
		// Attempt to write private copy to store.
		if err := nh.writeToStore(); err == ErrKeyModified {
			continue // another daemon won the race: retry on the refreshed sequence
		} else if err != nil {
			return 0, fmt.Errorf("internal failure while setting the bit: %v", err)
		}
		// Previous atomic push was successful. Save private copy to local copy.
		h.Lock()
		h.unselected, h.head, h.dbExists, h.dbIndex = nh.unselected, nh.head, nh.dbExists, nh.dbIndex
		h.Unlock()
		return ret, nil
	}
}

func main() {
	// ipam's Allocator.insertBitMask creates one handle per address pool.
	h, err := NewHandle("ipam", &datastore{kv: map[string]KVPair{}}, "LocalDefault/172.18.0.0/16", 256)
	if err != nil {
		panic(err)
	}
	for i := 0; i < 3; i++ {
		ord, err := h.SetAny()
		if err != nil {
			panic(err)
		}
		fmt.Println("allocated ordinal", ord)
	}
}
