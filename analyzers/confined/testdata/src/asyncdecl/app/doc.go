// Package app declares the pool's asynchronous APIs once, in code, so that
// go vet, golangci-lint and the standalone driver all see them, here and in
// every package importing this one.
package app

//confined:async asyncdecl/pool.(*Pool).Submit arg0
//confined:async asyncdecl/pool.Go arg1

//confined:async asyncdecl/pool.(*Pool).Sumbit arg0 // want `//confined:async: package asyncdecl/pool has no method Pool\.Sumbit; did you mean asyncdecl/pool\.\(\*Pool\)\.Submit\? \[directive-async\]`
//confined:async asyncdecl/pool.Go arg2 // want `asyncdecl/pool\.Go takes 2 arguments \(arg0 string, arg1 func\(\)\), so it has no arg2 .*\[directive-async\]`
//confined:async asyncdecl/pool.(*Pool).Size arg0 // want `arg0 of asyncdecl/pool\.\(\*Pool\)\.Size has type int, not a function type \[directive-async\]`
//confined:async asyncdecl/poool.Go arg1 // want `no package asyncdecl/poool is loaded \(imported here\); did you mean asyncdecl/pool\? \[directive-async\]`
//confined:async asyncdecl/pool.Go // want `//confined:async takes a function and the argument it runs on another goroutine, got 1 arguments.*\[directive-args\]`
