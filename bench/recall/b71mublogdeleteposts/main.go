// Mu (micro/mu, the personal app platform with blog, news and chat), PR #602
// (2026): blog.DeletePostsByAuthor deadlocked the blog.
//
// The blog package keeps its posts in package-level state guarded by one
// package-level sync.RWMutex named mutex: the posts slice, the postsMap index
// and the rendered preview HTML. updateCache takes mutex.Lock with a deferred
// unlock and rebuilds the rendered HTML through updateCacheUnlocked.
// DeletePostsByAuthor, run when an account is removed, takes mutex.Lock
// itself, filters the author's posts out, and then calls updateCache instead
// of updateCacheUnlocked. sync.RWMutex is not reentrant, so the account
// deletion blocks on its own lock forever. Every later page render reaches
// blog.Preview, whose RLock waits behind the held write lock, and the whole
// site hangs. How the account deletion reaches the blog (an admin handler
// calling account-deletion hooks) is reconstructed; the blog functions follow
// the PR.
//
// The fixed twin calls updateCacheUnlocked from DeletePostsByAuthor, as the
// PR does.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type Post struct {
	ID        string
	Title     string
	Content   string
	Author    string
	AuthorID  string
	CreatedAt time.Time
}

var (
	mutex            sync.RWMutex
	posts            []*Post
	postsMap         = map[string]*Post{}
	postsPreviewHtml string
)

func updateCacheUnlocked() {
	var b strings.Builder
	for i, p := range posts {
		if i == 3 {
			break
		}
		fmt.Fprintf(&b, "<div class=\"post\"><h3>%s</h3><p>%s</p></div>", p.Title, p.Author)
	}
	postsPreviewHtml = b.String()
}

func updateCache() {
	mutex.Lock()
	defer mutex.Unlock()
	updateCacheUnlocked()
}

func CreatePost(title, content, author, authorID string) {
	mutex.Lock()
	p := &Post{ID: fmt.Sprint(len(posts) + 1), Title: title, Content: content, Author: author, AuthorID: authorID, CreatedAt: time.Now()}
	posts = append([]*Post{p}, posts...)
	postsMap[p.ID] = p
	mutex.Unlock()
	updateCache()
}

func DeletePostsByAuthor(authorID string) int {
	mutex.Lock()
	defer mutex.Unlock()
	var kept []*Post
	deleted := 0
	for _, p := range posts {
		if p.AuthorID == authorID {
			delete(postsMap, p.ID)
			deleted++
			continue
		}
		kept = append(kept, p)
	}
	posts = kept
	updateCache()
	return deleted
}

func Preview() string {
	mutex.RLock()
	defer mutex.RUnlock()
	return postsPreviewHtml
}

type accountHook func(id string)

var (
	hooksMu       sync.Mutex
	deleteHooks   []accountHook
	deleteStarted = make(chan struct{})
)

func OnDeleteAccount(h accountHook) {
	hooksMu.Lock()
	deleteHooks = append(deleteHooks, h)
	hooksMu.Unlock()
}

func DeleteAccount(id string) {
	hooksMu.Lock()
	hooks := append([]accountHook(nil), deleteHooks...)
	hooksMu.Unlock()
	close(deleteStarted)
	for _, h := range hooks {
		h(id)
	}
}

func adminDeleteUserHandler(id string) {
	DeleteAccount(id)
	fmt.Println("admin: deleted account", id)
}

func homeHandler() string {
	return "<html><body>" + Preview() + "</body></html>"
}

func main() {
	OnDeleteAccount(func(id string) {
		n := DeletePostsByAuthor(id)
		fmt.Println("blog: removed", n, "posts by", id)
	})
	CreatePost("Hello", "first post", "alice", "u1")
	CreatePost("Spam", "buy now", "mallory", "u2")
	CreatePost("Notes", "second post", "alice", "u1")

	go adminDeleteUserHandler("u2")

	<-deleteStarted
	time.Sleep(50 * time.Millisecond)
	page := homeHandler()
	fmt.Println("home page:", len(page), "bytes")
}
