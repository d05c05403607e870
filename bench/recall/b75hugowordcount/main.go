// Project: gohugoio/hugo (hugolib/page.go, hugolib/page_without_content.go, hugolib/shortcode.go), v0.49/v0.50, autumn 2018 (issue #5379, approximate).
// Bug: the goroutine started by Page.initContent holds p.contentInitMu while rendering shortcodes; a shortcode that calls .Page.WordCount reaches the promoted (*Page).WordCount, waits for the contentInit Once until the outer call times out, and then initPlain(true) takes contentInitMu again inside the plainInit Once, so the page and every later .Plain/.WordCount caller hang.
package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

type Site struct {
	Timeout time.Duration
	Log     func(format string, args ...interface{})
}

// ---- hugolib/shortcode.go ----

type ShortcodeWithPage struct {
	Params map[string]string
	Inner  string
	Page   *PageWithoutContent
}

type shortcode struct {
	name        string
	placeholder string
	params      map[string]string
}

type shortcodeHandler struct {
	p                  *PageWithoutContent
	contentShortcodes  []shortcode
	templates          map[string]func(data *ShortcodeWithPage) string
	renderedShortcodes map[string]string
}

func (s *shortcodeHandler) executeShortcodesForDelta(p *PageWithoutContent) error {
	s.renderedShortcodes = make(map[string]string)
	for _, sc := range s.contentShortcodes {
		tmpl := s.templates[sc.name]
		data := &ShortcodeWithPage{Params: sc.params, Page: p}
		s.renderedShortcodes[sc.placeholder] = tmpl(data)
	}
	return nil
}

func handleShortcodes(p *PageWithoutContent, rawContentCopy []byte) ([]byte, error) {
	if len(p.shortcodeState.contentShortcodes) == 0 {
		return rawContentCopy, nil
	}
	if err := p.shortcodeState.executeShortcodesForDelta(p); err != nil {
		return rawContentCopy, err
	}
	s := string(rawContentCopy)
	for k, v := range p.shortcodeState.renderedShortcodes {
		s = strings.ReplaceAll(s, k, v)
	}
	return []byte(s), nil
}

// ---- hugolib/page_without_content.go ----

// PageWithoutContent is sent to the shortcodes. They cannot access the content
// they're a part of. It would cause an infinite regress.
type PageWithoutContent struct {
	*Page
}

// Content returns an empty string.
func (p *PageWithoutContent) Content() (interface{}, error) { return "", nil }

// Summary returns an empty string.
func (p *PageWithoutContent) Summary() string { return "" }

// ---- hugolib/page.go ----

type Page struct {
	s              *Site
	title          string
	workContent    []byte
	contentv       string
	summary        string
	plain          string
	plainWords     []string
	wordCount      int
	shortcodeState *shortcodeHandler

	contentInit        sync.Once
	contentInitMu      sync.Mutex
	plainInit          sync.Once
	plainWordsInit     sync.Once
	pageMetaInit       sync.Once
	withoutContentInit sync.Once
	pageWithoutContent *PageWithoutContent
}

func (p *Page) withoutContent() *PageWithoutContent {
	p.withoutContentInit.Do(func() {
		p.pageWithoutContent = &PageWithoutContent{Page: p}
	})
	return p.pageWithoutContent
}

func (p *Page) prepareForRender() error {
	workContentCopy := make([]byte, len(p.workContent))
	copy(workContentCopy, p.workContent)
	c, err := handleShortcodes(p.withoutContent(), workContentCopy)
	if err != nil {
		return err
	}
	p.contentv = string(c)
	return nil
}

func (p *Page) setAutoSummary() error {
	p.initPlain(false)
	p.initPlainWords(false)
	if len(p.plainWords) > 3 {
		p.summary = strings.Join(p.plainWords[:3], " ")
	} else {
		p.summary = p.plain
	}
	return nil
}

func (p *Page) initContent() {
	p.contentInit.Do(func() {
		// This careful dance is here to protect against circular loops in shortcode/content constructs.
		ctx, cancel := context.WithTimeout(context.Background(), p.s.Timeout)
		defer cancel()
		c := make(chan error, 1)

		go func() {
			var err error
			p.contentInitMu.Lock()
			defer p.contentInitMu.Unlock()

			err = p.prepareForRender()
			if err != nil {
				c <- err
				return
			}
			if len(p.summary) == 0 {
				err = p.setAutoSummary()
			}
			c <- err
		}()

		select {
		case <-ctx.Done():
			p.s.Log("Timed out creating content for page %q (.Content will be empty).", p.title)
		case err := <-c:
			if err != nil {
				p.s.Log("failed to render %q: %s", p.title, err)
			}
		}
	})
}

func (p *Page) initPlain(lock bool) {
	p.plainInit.Do(func() {
		if lock {
			p.contentInitMu.Lock()
			defer p.contentInitMu.Unlock()
		}
		p.plain = strings.TrimSpace(p.contentv)
	})
}

func (p *Page) initPlainWords(lock bool) {
	p.plainWordsInit.Do(func() {
		if lock {
			p.contentInitMu.Lock()
			defer p.contentInitMu.Unlock()
		}
		p.plainWords = strings.Fields(p.plain)
	})
}

func (p *Page) initMeta() {
	p.pageMetaInit.Do(func() {
		p.wordCount = len(p.plainWords)
	})
}

func (p *Page) initContentPlainAndMeta() {
	p.initContent()
	p.initPlain(true)
	p.initPlainWords(true)
	p.initMeta()
}

func (p *Page) Content() (interface{}, error) {
	p.initContent()
	return p.contentv, nil
}

func (p *Page) Plain() string {
	p.initContentPlainAndMeta()
	return p.plain
}

// WordCount returns the number of words in the rendered content of this page.
func (p *Page) WordCount() int {
	p.initContentPlainAndMeta()
	return p.wordCount
}

func main() {
	s := &Site{Timeout: 300 * time.Millisecond, Log: func(f string, a ...interface{}) { fmt.Printf("WARN "+f+"\n", a...) }}
	p := &Page{s: s, title: "post/stats.md", workContent: []byte("Some words about hugo. HAHAHUGOSHORTCODE-1HBHB")}
	p.shortcodeState = &shortcodeHandler{
		p:                 p.withoutContent(),
		contentShortcodes: []shortcode{{name: "readingstats", placeholder: "HAHAHUGOSHORTCODE-1HBHB"}},
		templates: map[string]func(*ShortcodeWithPage) string{
			// layouts/shortcodes/readingstats.html: {{ .Page.WordCount }} words
			"readingstats": func(data *ShortcodeWithPage) string {
				return fmt.Sprintf("(%d words)", data.Page.WordCount())
			},
		},
	}

	// single.html: {{ .Content }} ... <meta name="description" content="{{ .Plain }}">
	c, _ := p.Content()
	fmt.Println("content:", c)
	fmt.Println("plain:", p.Plain())
}
