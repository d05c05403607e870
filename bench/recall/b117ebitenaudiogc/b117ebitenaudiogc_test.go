// Project: hajimehoshi/ebiten (audio/audio.go Context.gcPlayers and addPlayer, audio/player.go playerImpl.Play, Err and IsPlaying), v2.5.x, August 2023.
// Bug: the per-frame hook Context.gcPlayers holds Context.m while it asks every registered playerImpl for Err() and IsPlaying(), which lock playerImpl.m, while a game goroutine replaying a finished sound effect runs playerImpl.Play, which holds playerImpl.m and registers the player again through Context.addPlayer, which locks Context.m. The update goroutine and the player goroutine deadlock AB-BA on the two mutexes (issue #2737, reported as ebitengine/oto#218); the fix copies the players under Context.m and calls the playerImpl methods without holding it ("A Context must not call playerImpl's functions with a lock").
package b117ebitenaudiogc

import (
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// player is almost the same as the interface oto.Player.
type player interface {
	Play()
	IsPlaying() bool
	Err() error
}

type otoContext interface {
	NewPlayer(r io.Reader) player
}

type playerFactory struct {
	context otoContext
	m       sync.Mutex
}

type Context struct {
	playerFactory *playerFactory
	err           error
	players       map[*playerImpl]struct{}
	m             sync.Mutex
}

func NewContext(driver otoContext, h *hooks) *Context {
	c := &Context{
		playerFactory: &playerFactory{context: driver},
		players:       map[*playerImpl]struct{}{},
	}
	h.AppendHookOnBeforeUpdate(func() error {
		return c.gcPlayers()
	})
	return c
}

func (c *Context) setError(err error) {
	c.m.Lock()
	c.err = err
	c.m.Unlock()
}

func (c *Context) addPlayer(p *playerImpl) {
	c.m.Lock()
	defer c.m.Unlock()
	c.players[p] = struct{}{}
}

func (c *Context) gcPlayers() error {
	c.m.Lock()
	defer c.m.Unlock()

	// Underlying playering can be the pause state after fishing its playing,
	// but there is no way to notify this to players so far.
	// Instead, let's check the states proactively every frame.
	for p := range c.players {
		if err := p.Err(); err != nil {
			return err
		}
		if !p.IsPlaying() {
			delete(c.players, p)
		}
	}
	return nil
}

func (c *Context) NewPlayer(src io.Reader) *Player {
	return &Player{p: &playerImpl{context: c, factory: c.playerFactory, src: src}}
}

type playerImpl struct {
	context *Context
	player  player
	src     io.Reader
	factory *playerFactory
	m       sync.Mutex
}

func (p *playerImpl) ensurePlayer() error {
	if p.player == nil {
		p.factory.m.Lock()
		p.player = p.factory.context.NewPlayer(p.src)
		p.factory.m.Unlock()
	}
	return nil
}

func (p *playerImpl) Play() {
	p.m.Lock()
	defer p.m.Unlock()

	if err := p.ensurePlayer(); err != nil {
		p.context.setError(err)
		return
	}
	if p.player.IsPlaying() {
		return
	}
	p.player.Play()
	p.context.addPlayer(p)
}

func (p *playerImpl) IsPlaying() bool {
	p.m.Lock()
	defer p.m.Unlock()
	if p.player == nil {
		return false
	}
	return p.player.IsPlaying()
}

func (p *playerImpl) Err() error {
	p.m.Lock()
	defer p.m.Unlock()
	if p.player == nil {
		return nil
	}
	return p.player.Err()
}

// Player is the exported wrapper, as in audio.Player.
type Player struct{ p *playerImpl }

func (p *Player) Play() { p.p.Play() }

// hooks mimics internal/hooks: functions run before every game Update.
type hooks struct{ before []func() error }

func (h *hooks) AppendHookOnBeforeUpdate(f func() error) { h.before = append(h.before, f) }

func (h *hooks) RunBeforeUpdateHooks() error {
	for _, f := range h.before {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// fakeDriver stands in for Oto: the 300ms sound effect has always finished
// when it is checked, and the second Play parks inside the driver.
type fakeDriver struct{ fp *fakePlayer }

func (d *fakeDriver) NewPlayer(r io.Reader) player { return d.fp }

type fakePlayer struct {
	plays          int // serialized by playerImpl.m
	inPlay, resume chan struct{}
}

func (f *fakePlayer) Play() {
	if f.plays++; f.plays == 2 {
		close(f.inPlay)
		<-f.resume
	}
}
func (f *fakePlayer) IsPlaying() bool { return false }
func (f *fakePlayer) Err() error      { return nil }

func TestB117ebitenaudiogc(t *testing.T) {
	h := &hooks{}
	fp := &fakePlayer{inPlay: make(chan struct{}), resume: make(chan struct{})}
	ctx := NewContext(&fakeDriver{fp: fp}, h)

	se := ctx.NewPlayer(strings.NewReader("jump.wav"))
	se.Play() // registered in ctx.players until the next gcPlayers

	played := make(chan struct{})
	go func() { // game logic replays the effect
		se.Play()
		close(played)
	}()
	<-fp.inPlay // playerImpl.m is held

	updated := make(chan struct{})
	go func() { // the game loop runs the audio hook
		_ = h.RunBeforeUpdateHooks()
		close(updated)
	}()
	time.Sleep(100 * time.Millisecond) // gcPlayers holds Context.m, waits for playerImpl.m
	close(fp.resume)

	<-played
	<-updated
}
