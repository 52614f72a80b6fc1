package outbox

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// pipelined is the Redis client the outbox's asynq client enqueues
// through. asynq enqueues a task with one EVALSHA and waits for its
// answer, so a batch of tasks costs a round trip each. publish runs the
// enqueues of a batch in goroutines of their own, each with a member of
// one gathering in its context; pipelined holds their EVALSHAs until
// every member has either sent one or finished without, and then sends
// them in one pipeline. Everything else, and an EVALSHA outside a
// gathering, goes straight to the client.
type pipelined struct {
	redis.UniversalClient
}

// EvalSha sends the script call in its gathering's pipeline, when ctx
// holds a member that has not sent one yet.
func (c pipelined) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	m, ok := ctx.Value(memberKey{}).(*member)
	if !ok || m.sent {
		return c.UniversalClient.EvalSha(ctx, sha, keys, args...)
	}
	m.sent, m.sha, m.keys, m.args = true, sha, keys, args
	m.g.arrive(ctx, m)
	<-m.done
	return m.cmd
}

type memberKey struct{}

// gathering collects the script calls of a batch of enqueues.
type gathering struct {
	rdb     redis.UniversalClient
	mu      sync.Mutex
	waiting int // members that have neither sent nor finished
	sent    []*member
}

// member is one enqueue of a gathering.
type member struct {
	g    *gathering
	sent bool
	sha  string
	keys []string
	args []any
	cmd  *redis.Cmd
	done chan struct{}
}

// gather runs each of n enqueues in a goroutine of its own with ctx
// carrying its member, and waits for them. One enqueue alone runs as it
// is: a pipeline of one is a round trip all the same.
func gather(ctx context.Context, rdb redis.UniversalClient, n int, enqueue func(ctx context.Context, i int)) {
	if n == 1 {
		enqueue(ctx, 0)
		return
	}
	g := &gathering{rdb: rdb, waiting: n}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			m := &member{g: g, done: make(chan struct{})}
			enqueue(context.WithValue(ctx, memberKey{}, m), i)
			if !m.sent {
				g.arrive(ctx, nil)
			}
		})
	}
	wg.Wait()
}

// arrive counts a member that sent its call (m) or finished without one
// (nil); the last to arrive sends the calls.
func (g *gathering) arrive(ctx context.Context, m *member) {
	g.mu.Lock()
	g.waiting--
	last := g.waiting == 0
	if m != nil {
		g.sent = append(g.sent, m)
	}
	g.mu.Unlock()
	if last {
		g.send(ctx)
	}
}

// send runs the gathered calls in one pipeline; each member reads its
// own answer (or error) from its command.
func (g *gathering) send(ctx context.Context) {
	if len(g.sent) == 0 {
		return
	}
	pipe := g.rdb.Pipeline()
	for _, m := range g.sent {
		m.cmd = pipe.EvalSha(ctx, m.sha, m.keys, m.args...)
	}
	pipe.Exec(ctx) // each command holds its own error
	for _, m := range g.sent {
		close(m.done)
	}
}
