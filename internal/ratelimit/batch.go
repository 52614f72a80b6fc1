package ratelimit

import (
	"context"
	"fmt"
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
	done   chan struct{}
}

// batcher runs the scripts of concurrent callers in shared pipelines: a
// call that arrives while a round trip is in flight waits for it to end and
// goes out with every other call that arrived meanwhile. A lone caller pays
// one round trip, as without batching; under load Redis and the kernel see
// one write and one read per batch instead of per request, which is most of
// what a limiter on Redis costs. The goroutine that sends the batches runs
// only while calls are waiting, so a Limiter needs no Close.
type batcher struct {
	rdb redis.UniversalClient

	mu      sync.Mutex
	queue   []*scriptCall
	running bool
}

// run executes script for the caller, batched with concurrent callers, and
// returns its integer array reply.
func (b *batcher) run(ctx context.Context, script *redis.Script, keys []string, args ...any) ([]int64, error) {
	c := &scriptCall{script: script, keys: keys, args: args, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if !b.running {
		b.running = true
		go b.loop()
	}
	b.mu.Unlock()
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loop sends the queued calls, up to maxBatch per round trip, until none are left.
func (b *batcher) loop() {
	for {
		b.mu.Lock()
		n := min(len(b.queue), maxBatch)
		if n == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()
		b.exec(batch)
	}
}

// exec sends batch as one pipeline of EVALSHAs. Calls that Redis answers
// NOSCRIPT (first use, or a Redis that restarted or flushed its script
// cache) are sent again once their scripts are loaded; the others ran and
// are not repeated.
func (b *batcher) exec(batch []*scriptCall) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	var missing []*scriptCall
	for i, cmd := range b.pipeline(ctx, batch) {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			missing = append(missing, batch[i])
			continue
		}
		batch[i].finish(cmd)
	}
	if len(missing) == 0 {
		return
	}
	if err := b.load(ctx, missing); err != nil {
		for _, c := range missing {
			c.err = err
			close(c.done)
		}
		return
	}
	for i, cmd := range b.pipeline(ctx, missing) {
		missing[i].finish(cmd)
	}
}

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
