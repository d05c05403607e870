// Project: tailscale/tailscale (ssh/tailssh/tailssh.go: conn.authorizeSession, resolveTerminalActionLocked, expandDelegateURL)
// Issue: tailscale/tailscale#5235 "ssh/tailssh: check mode deadlock introduced at HEAD after 1.28.0" (fixed by #5267)
// Fixed twin: as in #5267, expandDelegateURL is renamed expandDelegateURLLocked and no longer
// takes c.mu; its only caller, resolveTerminalActionLocked (line 76), runs under the lock that
// authorizeSession took (line 53).
package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// SSHAction is tailcfg.SSHAction.
type SSHAction struct {
	Message         string
	Reject          bool
	Accept          bool
	HoldAndDelegate string
}

type sshConnInfo struct {
	sshUser string
	src     string
	dst     string
	nodeID  int64
}

type localUser struct{ Username string }

type server struct {
	selfNodeID int64
	// delegate answers are what the control plane returns for a HoldAndDelegate URL.
	delegate map[string]*SSHAction
}

type conn struct {
	srv *server

	mu            sync.Mutex // protects the fields below
	action0       *SSHAction
	currentAction *SSHAction
	info          *sshConnInfo
	localUser     *localUser
}

type session struct{ user string }

// authorizeSession resolves the final action for the session s.
func (c *conn) authorizeSession(s *session) (ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	action, err := c.resolveTerminalActionLocked(s)
	if err != nil {
		fmt.Println("resolveTerminalAction:", err)
		return false
	}
	c.currentAction = action
	return action.Accept
}

// resolveTerminalActionLocked follows HoldAndDelegate actions until Accept or Reject.
// c.mu must be held.
func (c *conn) resolveTerminalActionLocked(s *session) (*SSHAction, error) {
	action := c.action0
	for {
		if action.Accept || action.Reject {
			return action, nil
		}
		u := action.HoldAndDelegate
		if u == "" {
			return nil, errors.New("reached Action that lacked Accept, Reject, and HoldAndDelegate")
		}
		u = c.expandDelegateURLLocked(u)
		next, err := c.fetchSSHAction(u)
		if err != nil {
			return nil, err
		}
		action = next
	}
}

// expandDelegateURLLocked expands the delegate URL. c.mu must be held.
func (c *conn) expandDelegateURLLocked(actionURL string) string {
	nodeID := c.srv.selfNodeID
	ci := c.info
	lu := c.localUser
	return strings.NewReplacer(
		"$SRC_NODE_IP", url.QueryEscape(ci.src),
		"$SRC_NODE_ID", fmt.Sprint(ci.nodeID),
		"$DST_NODE_IP", url.QueryEscape(ci.dst),
		"$DST_NODE_ID", fmt.Sprint(nodeID),
		"$SSH_USER", url.QueryEscape(ci.sshUser),
		"$LOCAL_USER", url.QueryEscape(lu.Username),
	).Replace(actionURL)
}

func (c *conn) fetchSSHAction(u string) (*SSHAction, error) {
	a, ok := c.srv.delegate[u]
	if !ok {
		return nil, fmt.Errorf("no answer for %s", u)
	}
	return a, nil
}

func main() {
	const tmpl = "https://login.tailscale.com/ssh-check?src=$SRC_NODE_IP&user=$SSH_USER&local=$LOCAL_USER"
	srv := &server{selfNodeID: 7, delegate: map[string]*SSHAction{
		"https://login.tailscale.com/ssh-check?src=100.64.0.2&user=alice&local=root": {Accept: true},
	}}
	c := &conn{
		srv:       srv,
		action0:   &SSHAction{HoldAndDelegate: tmpl},
		info:      &sshConnInfo{sshUser: "alice", src: "100.64.0.2", dst: "100.64.0.1", nodeID: 3},
		localUser: &localUser{Username: "root"},
	}

	done := make(chan bool)
	go func() { done <- c.authorizeSession(&session{user: "alice"}) }()
	fmt.Println("session accepted:", <-done)
}
