package locks

import (
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/roots"
)

// The blocking rule is the contract's narrow one: a lock held across a
// blocking operation is reported only when the goroutine that would
// unblock it also takes that lock. The peer of a channel receive is a
// goroutine that sends on (or closes) the same channel, and vice versa;
// the peer of WaitGroup.Wait one that calls Done on the same WaitGroup.
// Channels and WaitGroups are identified by where they live: the field or
// package var holding them, or the make/var that created them (followed
// through closures' free variables). Peers are the goroutines the package
// starts (entries, go statements, asynchronous callbacks), not exported
// functions with unknown callers. Timer, ticker and context channels and
// time.Sleep have no goroutine on the other end and are never reported.
// A Cond is identified the same way; Wait waits for a Signal or Broadcast
// and releases only its own lock (condwait.go). Blocking operations of
// callees count at the call (funcInfo.blocks).

// chanOp is one operation on a channel or WaitGroup, by identity.
type chanOp struct {
	Key  string
	Send bool // send, close or Done: unblocks the other side
	// Before: the lock classes taken on some path to the operation (loop
	// back-edges included), sorted (State.took); an
	// unblocker that never takes the blocked lock before it gets there
	// cannot be stuck waiting for it.
	Before []string
}

func (f *funcInfo) addChan(op chanOp) {
	if op.Key == "" {
		return
	}
	for i, o := range f.chans {
		if sameChanOp(o, op) {
			f.chans[i].Before = union(o.Before, op.Before)
			return
		}
	}
	if len(f.chans) < maxTakes {
		f.chans = append(f.chans, op)
	}
}

// blockingOps returns the channel operations instr performs and whether
// it blocks (a select with a default does not).
func (w *walker) blockingOps(instr ssa.Instruction) (ops []chanOp, what string) {
	switch x := instr.(type) {
	case *ssa.Send:
		for _, key := range w.e.sendKeys(w.fn, x.Chan) {
			op := chanOp{Key: key, Send: true}
			if w.checksOccupancy(op.Key) {
				return []chanOp{op}, ""
			}
			ops = append(ops, op)
		}
		return ops, "channel send"
	case *ssa.UnOp:
		if x.Op == token.ARROW {
			op := chanOp{Key: w.e.chanKey(w.fn, x.X, 0), Send: false}
			if w.checksOccupancy(op.Key) {
				return []chanOp{op}, ""
			}
			return []chanOp{op}, "channel receive"
		}
	case *ssa.Select:
		if len(x.States) == 0 && x.Blocking {
			return nil, blocksForever
		}
		bounded := false // a timer case: the select returns when it fires
		for _, st := range x.States {
			ops = append(ops, chanOp{Key: w.e.chanKey(w.fn, st.Chan, 0), Send: st.Dir == types.SendOnly})
			bounded = bounded || st.Dir == types.RecvOnly && (timerChan(st.Chan) || w.e.contextDone(st.Chan))
		}
		if !x.Blocking || bounded {
			return ops, ""
		}
		return ops, "select"
	case *ssa.Call:
		return w.callOps(&x.Call)
	case *ssa.Defer: // defer wg.Done(), defer close(ch): never block; recorded when run (runDefers)
		return nil, ""
	}
	return nil, ""
}

// checksOccupancy reports whether the function reads len or cap of the
// channel key names: it sends or receives knowing how full the buffer is
// (`if inflight < cap(ch) { ch <- e }`, etcd's too-many-requests check),
// so its operations on it are taken not to block.
func (w *walker) checksOccupancy(key string) bool {
	if key == "" {
		return false
	}
	if w.occupancy == nil {
		w.occupancy = map[string]bool{}
		for _, b := range w.fn.Blocks {
			for _, instr := range b.Instrs {
				c, ok := instr.(*ssa.Call)
				if !ok || !lenOrCap(&c.Call) {
					continue
				}
				if _, isChan := c.Call.Args[0].Type().Underlying().(*types.Chan); isChan {
					w.occupancy[w.e.chanKey(w.fn, c.Call.Args[0], 0)] = true
				}
			}
		}
	}
	return w.occupancy[key]
}

// callOps recognises close, WaitGroup.Done and WaitGroup.Wait, and
// Cond.Wait, Signal and Broadcast (a Cond is a channel of wake-ups).
func (w *walker) callOps(c *ssa.CallCommon) ([]chanOp, string) {
	if b, ok := c.Value.(*ssa.Builtin); ok && b.Name() == "close" && len(c.Args) == 1 {
		return []chanOp{{Key: w.e.chanKey(w.fn, c.Args[0], 0), Send: true}}, ""
	}
	switch name, cond := lockop.CondMethod(c); name {
	case "Wait":
		return []chanOp{{Key: w.e.chanKey(w.fn, cond, 0), Send: false}}, condWait
	case "Signal", "Broadcast":
		return []chanOp{{Key: w.e.chanKey(w.fn, cond, 0), Send: true}}, ""
	}
	switch listenerMethod(c) {
	case "Accept":
		return []chanOp{{Key: w.e.chanKey(w.fn, listenerValue(c), 0), Send: false}}, "listener's Accept"
	case "Close":
		return []chanOp{{Key: w.e.chanKey(w.fn, listenerValue(c), 0), Send: true}}, ""
	}
	switch waitGroupMethod(c) {
	case "Wait":
		return []chanOp{{Key: w.e.chanKey(w.fn, c.Args[0], 0), Send: false}}, "WaitGroup.Wait"
	case "Done":
		return []chanOp{{Key: w.e.chanKey(w.fn, c.Args[0], 0), Send: true}}, ""
	}
	return nil, ""
}

// waitGroupMethod is the name of the sync.WaitGroup method c calls on a
// receiver argument ("Wait", "Done", ...), "" for any other call.
func waitGroupMethod(c *ssa.CallCommon) string {
	callee := c.StaticCallee()
	if callee == nil || callee.Signature.Recv() == nil || len(c.Args) == 0 || callee.Pkg == nil ||
		callee.Pkg.Pkg.Path() != "sync" || typeNameOf(callee.Signature.Recv().Type()) != "WaitGroup" {
		return ""
	}
	return callee.Name()
}

// checkBlocking records instr's channel operations in the summary and,
// when it blocks with locks held, looks for a peer goroutine taking one.
func (w *walker) checkBlocking(instr ssa.Instruction, s State) {
	if !w.final {
		return // summary and findings are made in the final pass
	}
	ops, what := w.blockingOps(instr)
	for _, op := range ops {
		op.Before = s.took
		w.info.addChan(op)
	}
	if what == "" {
		return
	}
	b := blockOp{ops: ops, what: what, At: w.e.at(instr.Pos()), cond: w.condStep(), released: s.outerRel}
	if what == condWait {
		free, ok := w.condFree(instr)
		if !ok {
			return // which lock it releases is unknown: it may be any held
		}
		b.freePath, b.freeClass = free.Path, free.Class
	}
	w.info.addBlock(b)
	if w.report {
		w.reportBlocked(instr.Pos(), []blockOp{b}, s)
	}
}

// reportBlocked reports, for each lock held in s (but the one a Cond.Wait
// releases), the first of blocks a peer goroutine taking that lock would
// have to unblock.
func (w *walker) reportBlocked(pos token.Pos, blocks []blockOp, s State) {
	var mine map[*roots.Root]bool // the roots fn runs on, when first needed
	for _, h := range s.holds {
		if h.Maybe || h.Class == "" {
			continue
		}
		// A read lock blocks the unblocker only if it write-locks, or if a
		// writer (anywhere) may be waiting: then its read lock queues too.
		m := takeMode{class: h.Class, recv: w.receiverAt(pos)}
		if h.Shared {
			m.exclusive, m.writer = true, w.e.writerOf(h.Class)
			m.orShared = m.writer != ""
		}
		for _, b := range blocks {
			if b.frees(h) {
				continue
			}
			if b.what == blocksForever {
				if w.reportHeldForever(pos, h, b, m) {
					break
				}
				continue
			}
			// An operation on a buffered channel blocks only on an empty
			// (or full) buffer, which the analysis does not model:
			// wantConn.cancel receives, under the lock the sender takes,
			// only after the sender has filled the buffer.
			ops := slices.DeleteFunc(slices.Clone(b.ops), func(op chanOp) bool { return op.Key == "" || w.e.buffered(op.Key) })
			// No started goroutine at all (fn's own not excluded) could
			// unblock ops while taking the class: no finding, and no need
			// to walk back to the roots fn runs on.
			if len(ops) == 0 || w.e.startedTaking(ops, m, nil, w.fn) == nil {
				continue
			}
			if mine == nil {
				mine = w.e.ctx.RootsReaching(w.fn)
			}
			r := w.e.peerTaking(ops, m, mine, w.fn, b.what == "WaitGroup.Wait")
			if r == nil {
				continue
			}
			who := r.Describe()
			if w.e.programMain(r) {
				who = "the main goroutine"
			} else if roots.TestFunc(w.e.p.Pass.Fset, r.Func) {
				who = "the goroutine of test " + r.Func.Name()
			}
			unblocker := who
			if taker := w.e.boundTaker(r, ops, m); taker != "" {
				unblocker += ", running the function it was handed (" + taker + ")"
			}
			msg := h.Name + " (taken at " + w.e.at(h.Pos) + ") is held across a " + b.describe() + "; " + unblocker + ", which would unblock it, also takes " + h.Name
			if h.Shared && m.writer != "" && !w.e.writeLocks(r, h.Class) {
				msg += " (read-locked, but " + m.writer + " write-locks it: a waiting writer makes every later RLock wait)"
			}
			w.findBlockedUnderHold(pos, h, msg, diag.Hop{Pos: r.Pos, What: who + " starts here"})
			break
		}
	}
}

// findBlockedUnderHold reports an operation that blocks under hold h.
// Several under one hold are one problem, the hold (elastic's Stop: a
// stop handshake with the sniffer and one with the health checker, each
// a send and a receive, all under the client's lock): the first found is
// the finding, the others its related positions, counted in its
// message.
func (w *walker) findBlockedUnderHold(pos token.Pos, h Hold, msg string, start diag.Hop) {
	key := relockHoldKey{fn: w.fn, held: h.Pos, rule: "blocking-held", lock: h.Path}
	if g := w.e.relockHolds[key]; g != nil && g.finding < len(w.e.findings) {
		if f := w.e.findings[g.finding]; f.Pos != pos && !slices.Contains(f.Also, pos) {
			w.e.addUnderHold(g, pos, "blocks here too, under the same hold",
				" more operation blocks under this hold the same way", " more operations block under this hold the same way")
		}
		return
	}
	n := len(w.e.findings)
	w.e.find(pos, "blocking-held", msg, start)
	if len(w.e.findings) > n {
		w.e.keepHoldFinding(key, n, msg)
	}
}

// takeMode says which takes of a class would block on the held lock:
// any take (an exclusive hold), or, for a read hold, exclusive takes and,
// when a writer exists (named by writer), shared ones too.
type takeMode struct {
	class     string
	exclusive bool // only exclusive takes block...
	orShared  bool // ...or shared ones too, behind a waiting writer
	writer    string
	// recv names the object the blocking call is made on (objectKey),
	// for the functions handed to its goroutines (boundroots.go).
	recv string
}

// blocks reports whether one of ts would block on the held lock.
//
// A take through a call with several candidates does not count: it is
// the lock of one possible callee's object, and the common shape is a
// composite (a mixer whose goroutines call its sources' Next, one source
// type being the mixer's own) where that object is another instance. A
// deadlock claim needs the goroutine to take this lock, not maybe one
// like it. (Takes imported from other packages count as several when
// loose: their facts do not say.)
func (m takeMode) blocks(ts []take) bool {
	for _, t := range ts {
		if t.several || t.deep {
			continue // a deep take is for the double lock only
		}
		if t.Class == m.class && (!m.exclusive || !t.Shared || m.orShared) {
			return true
		}
	}
	return false
}

// writeLocks reports whether the goroutine started at r write-locks class.
func (e *engine) writeLocks(r *roots.Root, class string) bool {
	info := e.infos[r.Func]
	return info != nil && (takeMode{class: class, exclusive: true}).blocks(info.takes)
}

// writerOf names a function of the package that write-locks class, ""
// when none does. A constructor's lock of the object it has not yet
// shared (a fresh take) makes no reader wait.
// Asked in the checking phase only, when the summaries are final: the
// answer is kept per class.
func (e *engine) writerOf(class string) string {
	if w, ok := e.writers[class]; ok {
		return w
	}
	if e.writers == nil {
		e.writers = map[string]string{}
	}
	for _, fn := range e.p.Funcs {
		if info := e.infos[fn]; info != nil {
			for _, t := range info.takes {
				if t.Class == class && !t.Shared && t.Via == nil && !t.fresh {
					e.writers[class] = e.funcName(fn)
					return e.writers[class]
				}
			}
		}
	}
	e.writers[class] = ""
	return ""
}

// peerTaking finds a started goroutine, other than the ones fn runs on,
// that performs the opposite operation of one of ops and takes class.
//
// Every goroutine that can unblock the operation must take the lock: one
// that performs the opposite operation without ever taking it (pipe.go's
// time.AfterFunc callback that only closes the channel) unblocks it while
// the lock is held, whatever the others do. Roots of every kind count for
// that, exported functions included, but in package main: there an
// exported name has no callers outside the package, so it runs only on
// the goroutines the package starts.
//
// A WaitGroup.Wait (every) is the exception for the goroutines of its
// group: it needs every Done, so a goroutine started to defer the
// group's Done (`wg.Add(1); go r.run()`, run's first `defer wg.Done()`)
// that takes the lock blocks it whatever the others do (kafka-go's Close
// waiting, under the reader's lock, for the consumer-group loop that
// subscribes under it, beside partition readers that never lock). A Done
// made elsewhere (a release path reached from many places) is matched by
// the WaitGroup's field only, not its object: it stays excused.
func (e *engine) peerTaking(ops []chanOp, m takeMode, mine map[*roots.Root]bool, fn *ssa.Function, every bool) *roots.Root {
	if every {
		if r := e.memberTaking(ops, m, mine, fn); r != nil {
			return r
		}
	}
	for _, r := range e.ctx.Roots {
		info := e.infos[r.Func]
		if info == nil || mine[r] || r.Func == fn || e.calledInMainOnly(r) {
			continue
		}
		if (hasOpposite(info.chans, ops) && !m.blocks(info.takes) || hasOppositeFree(info.chans, ops, m.class)) &&
			(!e.testUnblocker(r) || e.startedByTest(r.Func, fn)) && !e.boundTaking(r, ops, m) {
			return nil
		}
	}
	return e.startedTaking(ops, m, mine, fn)
}

// memberTaking returns a goroutine started on a function that defers the
// Done of ops' WaitGroup and takes the lock, other than fn and the roots
// in mine: the deferred Done runs last, so every take of the goroutine
// comes before it.
func (e *engine) memberTaking(ops []chanOp, m takeMode, mine map[*roots.Root]bool, fn *ssa.Function) *roots.Root {
	for _, r := range e.ctx.Roots {
		if r.Kind != roots.KindGo || mine[r] || r.Func == fn {
			continue
		}
		if info := e.infos[r.Func]; info != nil && hasOpposite(info.chans, ops) && (m.blocks(info.takes) || e.boundTaking(r, ops, m)) && e.defersDone(r.Func, ops) {
			return r
		}
	}
	return nil
}

// defersDone reports whether fn defers the Done of one of ops' WaitGroups:
// directly, or as the last call of a deferred closure (`defer func() {
// r.remove(h); r.wg.Done() }()`, whose takes come before the Done too).
func (e *engine) defersDone(fn *ssa.Function, ops []chanOp) bool {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			d, ok := instr.(*ssa.Defer)
			if !ok {
				continue
			}
			callee := d.Common().StaticCallee()
			if callee == nil {
				continue
			}
			if e.groupDone(fn, d.Common(), ops) || callee.Parent() == fn && e.endsWithDone(callee, ops) {
				return true
			}
		}
	}
	return false
}

// groupDone reports whether call, in fn, is the Done of one of ops'
// WaitGroups.
func (e *engine) groupDone(fn *ssa.Function, c *ssa.CallCommon, ops []chanOp) bool {
	if waitGroupMethod(c) != "Done" {
		return false
	}
	key := e.chanKey(fn, c.Args[0], 0)
	return slices.ContainsFunc(ops, func(op chanOp) bool { return op.Key == key })
}

// endsWithDone reports whether the last call closure makes, on its one
// path, is the Done of one of ops' WaitGroups.
func (e *engine) endsWithDone(closure *ssa.Function, ops []chanOp) bool {
	if len(closure.Blocks) != 1 {
		return false
	}
	instrs := closure.Blocks[0].Instrs
	for i := len(instrs) - 1; i >= 0; i-- {
		if c, ok := instrs[i].(ssa.CallInstruction); ok {
			return e.groupDone(closure, c.Common(), ops)
		}
	}
	return false
}

// calledInMainOnly reports whether r is an exported function of package
// main, or one declared in a _test.go file, that nothing hands out as a
// value: not a goroutine of its own. Neither can be imported; only the
// package (and its tests) calls them. Test functions are goroutines of
// their own (testUnblocker).
func (e *engine) calledInMainOnly(r *roots.Root) bool {
	if r.Kind != roots.KindUnknown || e.p.Pass.Pkg.Name() != "main" && !e.inTest(r.Func.Pos()) || r.Func.Parent() != nil || e.ctx.Escapes(r.Func) {
		return false
	}
	return r.Func.Name() != "main" && r.Func.Name() != "init" && !roots.TestFunc(e.p.Pass.Fset, r.Func)
}

// startedTaking returns the first started goroutine (not an exported
// function's unknown callers; the main goroutine of a program counts),
// other than fn and the roots in mine, that
// performs the opposite operation of one of ops and takes class.
func (e *engine) startedTaking(ops []chanOp, m takeMode, mine map[*roots.Root]bool, fn *ssa.Function) *roots.Root {
	for _, r := range e.ctx.Roots {
		switch r.Kind {
		case roots.KindEntry, roots.KindGo, roots.KindAsync, roots.KindInterface, roots.KindCallback, roots.KindSerialized:
		case roots.KindUnknown:
			if !e.programMain(r) && !e.testUnblocker(r) {
				continue
			}
		default:
			continue
		}
		info := e.infos[r.Func]
		if info == nil || mine[r] || r.Func == fn {
			continue
		}
		if hasOpposite(info.chans, ops) && m.blocks(info.takes) && (!e.testUnblocker(r) || e.takesAfterStart(r.Func, fn, m)) {
			return r
		}
		if r.Kind == roots.KindGo && e.boundTaking(r, ops, m) {
			return r
		}
	}
	return nil
}

// testUnblocker reports whether r is a test function: a goroutine of its
// own, like func main, but only for the goroutines its test code starts
// (startedByTest), and only with the takes it makes after the start
// (takesAfterStart). A goroutine production code starts on the way (a
// mock's delivery loop, an informer's mutation detector) blocks when the
// test's setup lets it, and a take in the setup was let go before any
// goroutine it starts could hold the lock (sarama's and client-go's
// mocks, prometheus' truncation tests).
func (e *engine) testUnblocker(r *roots.Root) bool {
	return r.Kind == roots.KindUnknown && roots.TestFunc(e.p.Pass.Fset, r.Func)
}

// programMain reports whether r is func main of package main: the main
// goroutine, which runs whatever else runs.
func (e *engine) programMain(r *roots.Root) bool {
	return e.p.Pass.Pkg.Name() == "main" && r.Func.Parent() == nil && r.Func.Name() == "main" && r.Func.Signature.Recv() == nil
}

// timerChan reports whether ch is a timer's channel: time.After,
// time.Tick, or the C of a time.Timer or time.Ticker.
func timerChan(ch ssa.Value) bool {
	switch v := objects.Underlying(ch).(type) {
	case *ssa.Call:
		if f := v.Call.StaticCallee(); f != nil && f.Pkg != nil && f.Pkg.Pkg.Path() == "time" {
			return f.Name() == "After" || f.Name() == "Tick"
		}
	case *ssa.UnOp:
		if fa, ok := v.X.(*ssa.FieldAddr); ok && v.Op == token.MUL {
			if f := lockop.FieldOf(fa); f != nil && f.Name() == "C" && f.Pkg() != nil && f.Pkg().Path() == "time" {
				return true
			}
		}
	}
	return false
}

// contextDone reports whether ch is a context's Done channel, the
// result of Done() on a context.Context or a field every store of which
// is one (drone's worker.done, the requesting runner's context): the
// select returns when the context ends, as for a timer, and whoever ends
// it is out of sight.
func (e *engine) contextDone(ch ssa.Value) bool {
	switch v := objects.Underlying(ch).(type) {
	case *ssa.Call:
		return contextDoneCall(&v.Call)
	case *ssa.UnOp:
		fa, ok := v.X.(*ssa.FieldAddr)
		if !ok || v.Op != token.MUL {
			return false
		}
		stores := e.objs.StoresInto(lockop.FieldOf(fa))
		for _, st := range stores {
			c, ok := objects.Underlying(st.Val).(*ssa.Call)
			if !ok || !contextDoneCall(&c.Call) {
				return false
			}
		}
		return len(stores) > 0
	}
	return false
}

// contextDoneCall reports whether c calls context.Context's Done.
func contextDoneCall(c *ssa.CallCommon) bool {
	m := c.Method
	if fn, ok := c.Value.(*ssa.Function); ok && !c.IsInvoke() {
		m, _ = fn.Object().(*types.Func)
	}
	return m != nil && m.Name() == "Done" && m.Pkg() != nil && m.Pkg().Path() == "context"
}

func hasOpposite(have, ops []chanOp) bool {
	for _, op := range ops {
		for _, h := range have {
			if h.Key == op.Key && h.Send != op.Send {
				return true
			}
		}
	}
	return false
}

// chanKey identifies the channel or WaitGroup v: "" when unknown or fed
// by the runtime (timers, contexts). One made locally and kept in a field
// or package var is that field's (chanhome.go).
func (e *engine) chanKey(fn *ssa.Function, v ssa.Value, depth int) string {
	return e.homeOf(e.chanIdentity(fn, v, depth))
}

// chanIdentity is chanKey before a local channel is given its home.
func (e *engine) chanIdentity(fn *ssa.Function, v ssa.Value, depth int) string {
	for range 16 {
		if depth > 4 {
			return ""
		}
		if srcs, ok := e.objs.ElemSources(fn, v); ok {
			return e.elemChanKey(srcs, depth+1)
		}
		switch x := v.(type) {
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return ""
			}
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		case *ssa.FieldAddr:
			return "field:" + lockop.ClassKey(lockop.FieldOf(x))
		case *ssa.Global:
			if obj, ok := x.Object().(*types.Var); ok {
				return "var:" + lockop.ClassKey(obj)
			}
			return ""
		case *ssa.MakeChan:
			return "make:" + e.p.Pass.Fset.Position(x.Pos()).String()
		case *ssa.Call:
			if _, isCond := lockop.NewCondArg(x); isCond {
				return "make:" + e.p.Pass.Fset.Position(x.Pos()).String()
			}
			return e.returnedChanKey(x, depth+1)
		case *ssa.Alloc:
			if _, isChan := x.Type().(*types.Pointer).Elem().Underlying().(*types.Chan); !isChan {
				return "var:" + e.p.Pass.Fset.Position(x.Pos()).String()
			}
			if stored := objects.StoredOnce(x); stored != nil {
				v = stored
				continue
			}
			return ""
		case *ssa.FreeVar:
			parent, b, ok := e.objs.Binding(fn, x)
			if !ok {
				return ""
			}
			return e.chanIdentity(parent, b, depth+1)
		case *ssa.Parameter:
			return e.paramChanKey(fn, x, depth+1)
		default:
			return ""
		}
	}
	return ""
}

// elemChanKey is the channel an element of a container is when every
// value put there is the same one (objects.ElemSources): a broker's one
// subscriber channel, "" otherwise.
func (e *engine) elemChanKey(srcs []objects.Placed, depth int) string {
	key := ""
	for _, src := range srcs {
		k := e.chanIdentity(src.Fn, src.Val, depth)
		if k == "" || key != "" && k != key {
			return ""
		}
		key = k
	}
	return key
}

// sendKeys lists the channels a send may be on: the one chanKey names,
// or, for an element of a container filled from several (a notifier's
// subscribers: `for _, ch := range events[name] { ch <- ev }`), each of
// them, as the cases of a select are: the send waits for the receiver of
// whichever it is on.
func (e *engine) sendKeys(fn *ssa.Function, v ssa.Value) []string {
	if k := e.chanKey(fn, v, 0); k != "" {
		return []string{k}
	}
	srcs, ok := e.objs.ElemSources(fn, v)
	if !ok {
		return []string{""}
	}
	var keys []string
	for _, src := range srcs {
		k := e.chanKey(src.Fn, src.Val, 1)
		if k == "" {
			return []string{""}
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// returnedChanKey is the channel a call returns when every package
// function it may run returns the same one (an accessor such as Notify()
// returning a field), "" otherwise.
func (e *engine) returnedChanKey(call *ssa.Call, depth int) string {
	key := ""
	for _, callee := range e.objs.Callees(call.Common()) {
		for _, res := range objects.ReturnedValues(callee) {
			if c, ok := res.(*ssa.Const); ok && c.IsNil() {
				continue // "no channel": nothing to wait on
			}
			k := e.chanIdentity(callee, res, depth)
			if k == "" || key != "" && k != key {
				return ""
			}
			key = k
		}
	}
	return key
}

func typeNameOf(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Obj().Name()
	}
	return t.String()
}

// buffered reports whether every channel made for key (by identity, see
// chanKey) in the package is made with a non-zero capacity, and there is
// at least one.
func (e *engine) buffered(key string) bool {
	if !strings.HasPrefix(key, "field:") && !strings.HasPrefix(key, "make:") && !strings.HasPrefix(key, "var:") {
		return false
	}
	if e.chanCaps == nil {
		e.chanCaps = map[string]bool{}
		for _, fn := range e.p.Funcs {
			for _, b := range fn.Blocks {
				for _, instr := range b.Instrs {
					mc, ok := instr.(*ssa.MakeChan)
					if !ok {
						continue
					}
					buf := sizedForWork(mc.Size)
					keys := []string{e.chanKey(fn, mc, 0)}
					for _, ref := range *mc.Referrers() {
						if st, ok := ref.(*ssa.Store); ok && st.Val == mc {
							keys = append(keys, e.chanKey(fn, st.Addr, 0))
						}
					}
					for _, k := range keys {
						if k == "" {
							continue
						}
						if old, seen := e.chanCaps[k]; seen {
							buf = buf && old
						}
						e.chanCaps[k] = buf
					}
				}
			}
		}
	}
	return e.chanCaps[key]
}

// sizedForWork reports whether a channel made with capacity size is
// buffered for what it will carry: a constant above zero, a size computed
// from a len or cap (one slot per sender, results of a known batch), or a
// package var (a default the package chose: database/sql's
// connectionRequestQueueSize). A capacity read from configuration or a
// parameter may be 0 (gitea's queue LENGTH=0) or the bound a semaphore
// fills (a pool's max open connections), so an operation on it may block.
func sizedForWork(size ssa.Value) bool {
	switch v := size.(type) {
	case *ssa.Const:
		return v.Int64() > 0
	case *ssa.UnOp: // a package var: a default the package chose
		_, ok := v.X.(*ssa.Global)
		return ok && v.Op == token.MUL
	case *ssa.Convert:
		return sizedForWork(v.X)
	case *ssa.BinOp:
		return sizedForWork(v.X) || sizedForWork(v.Y)
	case *ssa.Call:
		return lenOrCap(&v.Call)
	}
	return false
}

// lenOrCap reports whether c is a call of the builtin len or cap.
func lenOrCap(c *ssa.CallCommon) bool {
	b, ok := c.Value.(*ssa.Builtin)
	return ok && (b.Name() == "len" || b.Name() == "cap") && len(c.Args) == 1
}

// hasOppositeFree reports whether have holds the opposite of one of ops
// reached without taking class first (chanOp.Before): that unblocker
// does not wait for the lock before it unblocks.
func hasOppositeFree(have, ops []chanOp, class string) bool {
	for _, op := range ops {
		for _, h := range have {
			if h.Key == op.Key && h.Send != op.Send && !slices.Contains(h.Before, class) {
				return true
			}
		}
	}
	return false
}

// blocksForever is the operation of `select {}`: no goroutine unblocks
// it.
const blocksForever = "select {}, which never returns"

// reportHeldForever reports h, held across b, an operation that blocks
// forever, when another function of the package takes h's class as m
// says would block: the lock is never released, so that take waits
// forever (dubbo-go's Serve parking in select {} under its lock while
// request handlers read-lock it). The function itself, and constructors
// taking a fresh object's lock, do not count.
func (w *walker) reportHeldForever(pos token.Pos, h Hold, b blockOp, m takeMode) bool {
	for _, fn := range w.e.p.Funcs {
		if fn == w.fn {
			continue
		}
		info := w.e.infos[fn]
		if info == nil {
			continue
		}
		for _, t := range info.takes {
			if t.Via != nil || t.fresh || !m.blocks([]take{t}) {
				continue
			}
			name := w.e.funcName(fn)
			msg := h.Name + " (taken at " + w.e.at(h.Pos) + ") is held across a " + b.describe() + ": it is never released, and " + name + " also takes it"
			w.e.find(pos, "blocking-held", msg, diag.Hop{Pos: t.Pos, What: name + " takes " + h.Name})
			return true
		}
	}
	return false
}
