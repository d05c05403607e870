// Like hugo's content collector on x/sync errgroup: workers lock a shared
// results mutex to append pages; the coordinator calls g.Wait() without
// holding that mutex and only reads results after Wait returns.
package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"example.com/recall/hugowalk/group"
)

type Page struct {
	Path  string
	Words int
}

type Collector struct {
	mu    sync.Mutex
	pages []Page
	bytes int
}

func (c *Collector) add(p Page, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pages = append(c.pages, p)
	c.bytes += n
}

func (c *Collector) Collect(ctx context.Context, files map[string]string) error {
	g, ctx := group.WithContext(ctx)
	g.SetLimit(3)
	for path, body := range files {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			c.add(Page{Path: path, Words: len(strings.Fields(body))}, len(body))
			return nil
		})
	}
	return g.Wait()
}

func main() {
	files := make(map[string]string)
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("content/post-%02d.md", i)] = strings.Repeat("lorem ipsum ", i+1)
	}
	c := &Collector{}
	if err := c.Collect(context.Background(), files); err != nil {
		panic(err)
	}
	c.mu.Lock()
	total := 0
	for _, p := range c.pages {
		total += p.Words
	}
	fmt.Println("pages:", len(c.pages), "words:", total, "bytes:", c.bytes)
	c.mu.Unlock()
}
