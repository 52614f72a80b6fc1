package ratelimit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxBatch caps the scripts sent in one pipeline.
const maxBatch = 256

// batchTimeout bounds one pipeline round trip; a caller whose own context
// ends sooner stops waiting at once.
const batchTimeout = 2 * time.Second

// scriptCall is one script run a caller waits for.
type scriptCall struct {
	script *redis.Script
	keys   []string
	args   []any
	res    []int64
	err    error
	done   chan struct{}      // closed once res and err are set
	lead   chan []*scriptCall // the batch this call's caller is to send next
}

// batcher runs the scripts of concurrent callers in shared pipelines: a
// call that arrives while a round trip is in flight waits for it to end and
// goes out with every other call that arrived meanwhile. A lone caller pays
// one round trip, as without batching; under load Redis and the kernel see
// one write and one read per batch instead of per request, which is most of
// what a limiter on Redis costs.
//
// The batches are sent by the callers themselves, one at a time: the caller
// that finds no round trip in flight sends its own call, then hands the
// calls that queued meanwhile to the first of them, whose caller sends them
// and hands on in turn. No goroutine outlives its caller, so a Limiter needs
// no Close. (go-redis's own automatic pipelining would batch as well, but
// its blocking calls do not end with their caller's context.)
type batcher struct {
	rdb redis.UniversalClient

	mu      sync.Mutex
	queue   []*scriptCall
	sending bool // a caller holds the turn to send
}

// run executes script for the caller, batched with concurrent callers, and
// returns its integer array reply. A caller whose ctx ends while its call
// still waits in the queue withdraws it, so it spends nothing; a call that a
// batch has taken goes out all the same.
func (b *batcher) run(ctx context.Context, script *redis.Script, keys []string, args ...any) ([]int64, error) {
	c := newCall(script, keys, args...)
	if err := b.runAll(ctx, c); err != nil {
		return nil, err
	}
	return c.res, c.err
}

func newCall(script *redis.Script, keys []string, args ...any) *scriptCall {
	return &scriptCall{script: script, keys: keys, args: args, done: make(chan struct{}), lead: make(chan []*scriptCall, 1)}
}

// runAll executes calls, in order, batched with concurrent callers' as run
// does, and together: in one round trip when none is in flight, else in
// the batch that follows it (in more than one only past maxBatch). Each
// call's res and err are set once it returns nil. When ctx ends first, it
// returns ctx's error, and the calls still queued are withdrawn.
func (b *batcher) runAll(ctx context.Context, calls ...*scriptCall) error {
	b.mu.Lock()
	if !b.sending {
		b.sending = true
		b.mu.Unlock()
		b.send(ctx, calls)
		return nil
	}
	b.queue = append(b.queue, calls...)
	b.mu.Unlock()
	// Batches go out in the queue's order, so the turn to send one that
	// holds a later call comes only after the earlier calls are done.
	for i, c := range calls {
		select {
		case <-c.done:
		case batch := <-c.lead:
			b.send(ctx, batch) // c is in it
		case <-ctx.Done():
			b.giveUp(ctx, calls[i:])
			return ctx.Err()
		}
	}
	return nil
}

// giveUp withdraws the calls of a caller whose ctx ended. One that a batch
// has taken goes out all the same: another caller is sending it, or it was
// handed to this caller, who must send it for the others.
func (b *batcher) giveUp(ctx context.Context, calls []*scriptCall) {
	for _, c := range calls {
		if b.withdraw(c) {
			continue
		}
		select {
		case batch := <-c.lead:
			b.send(ctx, batch)
		default:
		}
	}
}

// withdraw takes c out of the queue, or reports false when a batch has taken it.
func (b *batcher) withdraw(c *scriptCall) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.queue, c)
	if i < 0 {
		return false
	}
	b.queue = slices.Delete(b.queue, i, i+1)
	return true
}

// send executes batch, then passes the turn: to the first of the calls that
// queued meanwhile, with up to maxBatch of them, or back to idle. The
// sender's ctx bounds a batch of its own call alone; a batch that carries
// other callers' calls goes out whatever becomes of the sender's request.
func (b *batcher) send(ctx context.Context, batch []*scriptCall) {
	defer b.passTurn() // whatever happens in exec, the queue is not left without a sender
	if len(batch) > 1 {
		ctx = context.WithoutCancel(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, batchTimeout)
	defer cancel()
	b.exec(ctx, batch)
}

func (b *batcher) passTurn() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.sending = false
		return
	}
	n := min(len(b.queue), maxBatch)
	next := slices.Clone(b.queue[:n])
	b.queue = slices.Delete(b.queue, 0, n)
	next[0].lead <- next
}

// exec sends batch as one pipeline of EVALSHAs. Calls that Redis answers
// NOSCRIPT (first use, or a Redis that restarted or flushed its script
// cache) are sent again once their scripts are loaded, up to
// scriptAttempts times in all (the cache may be flushed again between the
// load and the call); the others ran and are not repeated.
func (b *batcher) exec(ctx context.Context, batch []*scriptCall) {
	for attempt := 1; len(batch) > 0; attempt++ {
		var missing []*scriptCall
		for i, cmd := range b.pipeline(ctx, batch) {
			if attempt < scriptAttempts && redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
				missing = append(missing, batch[i])
				continue
			}
			batch[i].finish(cmd)
		}
		if err := b.load(ctx, missing); err != nil {
			for _, c := range missing {
				c.err = err
				close(c.done)
			}
			return
		}
		batch = missing
	}
}

// scriptAttempts is how often a call is sent while Redis answers NOSCRIPT.
const scriptAttempts = 3

func (c *scriptCall) finish(cmd *redis.Cmd) {
	c.res, c.err = cmd.Int64Slice()
	close(c.done)
}

// pipeline sends batch in one round trip; every command carries its own
// outcome, a failed round trip included.
func (b *batcher) pipeline(ctx context.Context, batch []*scriptCall) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(batch))
	b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range batch {
			cmds[i] = c.script.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	return cmds
}

func (b *batcher) load(ctx context.Context, batch []*scriptCall) error {
	seen := map[*redis.Script]bool{}
	for _, c := range batch {
		if seen[c.script] {
			continue
		}
		seen[c.script] = true
		if err := c.script.Load(ctx, b.rdb).Err(); err != nil {
			return fmt.Errorf("load rate-limit script: %w", err)
		}
	}
	return nil
}
