package ctx

import (
	"net/http"
	"time"
)

type T struct{ n int }

//confined:entry
func (t *T) run() { // want `ctx entry\(T.run\): T.run`
	t.helper()
	go t.worker()
	f := t.bump
	time.AfterFunc(time.Second, f)
	for i := range 2 {
		go func() { t.n += i }() // want `ctx go\(go statement\): T.run.func1`
	}
	apply(func() { t.helper() }) // want `ctx entry\(T.run\): T.run -> T.run.func2`
}

func (t *T) helper() {} // want `ctx entry\(T.run\): T.run -> T.helper; go\(go statement\): T.worker -> T.helper`

func (t *T) worker() { t.helper() } // want `ctx go\(go statement\): T.worker`

func (t *T) bump() { t.n++ } // want `ctx async\(time.AfterFunc\): T.bump`

func apply(f func()) { f() } // want `ctx entry\(T.run\): T.run -> apply`

type H struct{}

func (H) ServeHTTP(http.ResponseWriter, *http.Request) {} // want `ctx interface\(http.Handler.ServeHTTP\): H.ServeHTTP`

type Doer interface{ Do() }

type D struct{}

func (D) Do() {} // want `ctx unknown\(D.Do\): D.Do$`

// Call calls through an interface.
func Call(d Doer) { d.Do() } // want `ctx unknown\(Call\): Call`

//confined:callback
func onEvent() {} // want `ctx callback\(onEvent\): onEvent`

var hook = escaped

func escaped() {} // want `ctx unknown\(escaped\): escaped`

// Outer and Inner are roots of their own (exported): a walk from Outer
// stops at Inner, so inner runs on Inner's context only.
func Outer() { Inner() } // want `ctx unknown\(Outer\): Outer$`

func Inner() { inner() } // want `ctx unknown\(Inner\): Inner$`

func inner() {} // want `ctx unknown\(Inner\): Inner -> inner$`
