// Project: go-ethereum (log/format.go and rlp/typecache.go; approximate).
//
// Bug (approximate): AB-BA between two package-level locks of two packages:
//   - log: the terminal formatter (logfmt) held the package-level
//     fieldPaddingLock while it formatted the record's context values; a value
//     implementing TerminalStringer (a transaction, printed by hash) computes
//     its hash by RLP-encoding itself -> rlp.cachedTypeInfo -> typeCacheMutex.
//   - rlp: generating the encoder for a not-yet-seen type happens with the
//     package-level typeCacheMutex held; the generator traced what it built via
//     log.Trace -> logfmt -> fieldPaddingLock.
//
// Logging a transaction while another goroutine RLP-encodes a new type for the
// first time (e.g. a block header at startup) deadlocks both goroutines.
// Fix: format the value first and hold fieldPaddingLock only around the
// padding-map access (which is what log/format.go does).
// The two packages are flattened into this one file; identifiers keep their
// original package-level names.
package gethlogrlp

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// ===================== package log =====================

const termCtxMaxPadding = 40

var (
	fieldPaddingLock sync.RWMutex
	fieldPadding     = make(map[string]int)
)

// TerminalStringer is an analogous interface to the stdlib stringer, allowing
// own types to have custom shortened serialization formats when printed to the
// screen.
type TerminalStringer interface {
	TerminalString() string
}

type Record struct {
	Msg string
	Ctx []interface{}
}

var logOutput = struct {
	sync.Mutex
	buf bytes.Buffer
}{}

func Info(msg string, ctx ...interface{})  { write(Record{Msg: msg, Ctx: ctx}) }
func Trace(msg string, ctx ...interface{}) { write(Record{Msg: msg, Ctx: ctx}) }

func write(r Record) {
	var b bytes.Buffer
	b.WriteString(r.Msg)
	logfmt(&b, r.Ctx, true)
	logOutput.Lock()
	logOutput.buf.Write(b.Bytes())
	logOutput.Unlock()
}

func logfmt(buf *bytes.Buffer, ctx []interface{}, term bool) {
	for i := 0; i+1 < len(ctx); i += 2 {
		k, _ := ctx[i].(string)
		fieldPaddingLock.Lock() // DEADLOCK HERE (rlp generator goroutine holds typeCacheMutex)
		v := formatLogfmtValue(ctx[i+1], term)
		padding := fieldPadding[k]
		length := utf8.RuneCountInString(v)
		if padding < length && length <= termCtxMaxPadding {
			padding = length
			fieldPadding[k] = padding
		}
		fieldPaddingLock.Unlock()
		fmt.Fprintf(buf, " %s=%-*s", k, padding, v)
	}
	buf.WriteByte('\n')
}

func formatLogfmtValue(value interface{}, term bool) string {
	if term {
		if ts, ok := value.(TerminalStringer); ok {
			return ts.TerminalString()
		}
	}
	return fmt.Sprint(value)
}

// ===================== package rlp =====================

type writer func(reflect.Value, *bytes.Buffer) error

type typeinfo struct {
	writer writer
}

var (
	typeCacheMutex sync.RWMutex
	typeCache      = make(map[reflect.Type]*typeinfo)
)

func cachedTypeInfo(typ reflect.Type) *typeinfo {
	typeCacheMutex.RLock() // DEADLOCK HERE (logging goroutine holds fieldPaddingLock; generator holds typeCacheMutex)
	info := typeCache[typ]
	typeCacheMutex.RUnlock()
	if info != nil {
		return info
	}
	// not in the cache, need to generate info for this type.
	typeCacheMutex.Lock() // DEADLOCK HERE (same edge, if the logging goroutine got past the RLock fast path first)
	defer typeCacheMutex.Unlock()
	return cachedTypeInfo1(typ)
}

func cachedTypeInfo1(typ reflect.Type) *typeinfo {
	if info := typeCache[typ]; info != nil {
		return info
	}
	info := genTypeInfo(typ)
	typeCache[typ] = info
	return info
}

func genTypeInfo(typ reflect.Type) *typeinfo {
	time.Sleep(20 * time.Millisecond) // reflect over all fields, build field writers
	w := func(v reflect.Value, b *bytes.Buffer) error {
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Uint64:
				binary.Write(b, binary.BigEndian, f.Uint())
			case reflect.Slice:
				b.Write(f.Bytes())
			}
		}
		return nil
	}
	Trace("rlp: generated encoder", "type", typ.String(), "fields", typ.NumField())
	return &typeinfo{writer: w}
}

func EncodeToBytes(val interface{}) ([]byte, error) {
	rv := reflect.Indirect(reflect.ValueOf(val))
	var b bytes.Buffer
	if err := cachedTypeInfo(rv.Type()).writer(rv, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ===================== package core/types =====================

type txdata struct {
	AccountNonce uint64
	Price        uint64
	GasLimit     uint64
	Payload      []byte
}

type Transaction struct{ data txdata }

func rlpHash(x interface{}) [32]byte {
	enc, _ := EncodeToBytes(x)
	return sha256.Sum256(enc) // keccak256 in geth
}

func (tx *Transaction) Hash() [32]byte { return rlpHash(&tx.data) }

func (tx *Transaction) TerminalString() string {
	h := tx.Hash()
	return fmt.Sprintf("%x…%x", h[:3], h[29:])
}

type Header struct {
	Number   uint64
	GasLimit uint64
	Time     uint64
	Extra    []byte
}

func TestLogTransactionWhileEncodingHeader(t *testing.T) {
	tx := &Transaction{data: txdata{AccountNonce: 1, Price: 1e9, GasLimit: 21000}}
	header := &Header{Number: 1, GasLimit: 30_000_000, Time: 1700000000}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // miner / downloader: first header encoded since startup
		defer wg.Done()
		if _, err := EncodeToBytes(header); err != nil {
			t.Error(err)
		}
	}()
	time.AfterFunc(5*time.Millisecond, func() { // eth API: SendTransaction logs the tx
		defer wg.Done()
		Info("Submitted transaction", "fullhash", tx, "nonce", tx.data.AccountNonce)
	})
	wg.Wait()
}
