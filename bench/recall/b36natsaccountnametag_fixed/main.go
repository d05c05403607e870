// Project: nats-io/nats-server v2.11 (server/monitor.go: Server.accountInfo; server/accounts.go: Account.getNameTag, Account.addClient)
// Issue: nats-io/nats-server#6527 "[FIXED] Deadlock on getting account name tag" (regression from #6310)
// Fixed twin: as in #6527, accountInfo already holds the account's read lock (line 84), so it
// reads the tag through getNameTagLocked (line 99) instead of the locking getNameTag (line 34);
// the connecting client's Lock (line 53) waits only until accountInfo returns.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

const _EMPTY_ = ""

type client struct{ cid uint64 }

// Account is a NATS account.
type Account struct {
	mu       sync.RWMutex
	Name     string
	nameTag  string
	claimJWT string
	clients  map[*client]struct{}
	exports  map[string]struct{}
	imports  map[string]struct{}
}

func (a *Account) getNameTag() string {
	if a == nil {
		return _EMPTY_
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.getNameTagLocked()
}

// getNameTagLocked returns the name tag. Lock should be held.
func (a *Account) getNameTagLocked() string {
	if a == nil {
		return _EMPTY_
	}
	nameTag := a.nameTag
	if nameTag == _EMPTY_ {
		nameTag = a.Name
	}
	return nameTag
}

// addClient registers a client with the account.
func (a *Account) addClient(c *client) int {
	a.mu.Lock()
	n := len(a.clients)
	a.clients[c] = struct{}{}
	a.mu.Unlock()
	return n
}

// AccountInfo is the Accountz reply for one account.
type AccountInfo struct {
	AccountName    string   `json:"account_name"`
	AccountNameTag string   `json:"account_name_tag"`
	Exports        []string `json:"exports"`
	Imports        []string `json:"imports"`
	Clients        int      `json:"num_clients"`
}

// Server is a trimmed nats Server.
type Server struct{ accounts sync.Map }

func decodeAccountClaims(jwt string) string {
	time.Sleep(50 * time.Millisecond) // signature verification of a large JWT
	return jwt
}

func (s *Server) accountInfo(accName string) (*AccountInfo, error) {
	var a *Account
	if v, ok := s.accounts.Load(accName); !ok {
		return nil, fmt.Errorf("Account %s does not exist", accName)
	} else {
		a = v.(*Account)
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	_ = decodeAccountClaims(a.claimJWT)
	exports := make([]string, 0, len(a.exports))
	for subj := range a.exports {
		exports = append(exports, subj)
	}
	imports := make([]string, 0, len(a.imports))
	for subj := range a.imports {
		imports = append(imports, subj)
	}
	sort.Strings(exports)
	sort.Strings(imports)
	return &AccountInfo{
		AccountName:    accName,
		AccountNameTag: a.getNameTagLocked(),
		Exports:        exports,
		Imports:        imports,
		Clients:        len(a.clients),
	}, nil
}

func main() {
	s := &Server{}
	acc := &Account{
		Name:     "ACSU3Q6LTLBVLGAQUONAGXJHVNWGSKKAUA7IY5TB4Z7PLEKSR5O6JTGR",
		nameTag:  "ENGINEERING",
		claimJWT: "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ...",
		clients:  map[*client]struct{}{},
		exports:  map[string]struct{}{"orders.>": {}},
		imports:  map[string]struct{}{"billing.>": {}},
	}
	s.accounts.Store(acc.Name, acc)

	reply := make(chan *AccountInfo)
	go func() { // GET /accountz?acc=...
		info, err := s.accountInfo(acc.Name)
		if err != nil {
			fmt.Println(err)
		}
		reply <- info
	}()

	time.Sleep(10 * time.Millisecond)
	go acc.addClient(&client{cid: 42}) // a client connects to the account

	info := <-reply
	fmt.Printf("accountz: %s (%s) exports=%v\n", info.AccountName, info.AccountNameTag, info.Exports)
}
