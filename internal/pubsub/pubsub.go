// Package pubsub reads a Redis subscription for as long as a process
// needs it. A failed receive is tried again after a pause that grows to 5
// seconds (go-redis subscribes again on a new connection), and the caller
// hears each time the subscription is made, first and again: whatever was
// published while it was down is lost, and the caller catches up.
package pubsub

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Handler is what a listener tells its caller. Every field may be nil.
type Handler struct {
	// Subscribed is called each time the server confirms a subscription
	// of ps (a SUBSCRIBE or PSUBSCRIBE): at first and after a reconnect.
	Subscribed func()
	// Message is called with each message, in order.
	Message func(*redis.Message)
	// Failed is called with each failed receive, before the pause.
	Failed func(error)
}

// Go makes the subscription subscribe returns and listens to it in a
// goroutine of wg, calling h, until stop is called. stop ends the listening
// and closes the subscription; wait on wg for the goroutine to return.
func Go(wg *sync.WaitGroup, subscribe func(ctx context.Context) *redis.PubSub, h Handler) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ps := subscribe(ctx)
	wg.Go(func() { listen(ctx, ps, h) })
	return func() {
		cancel()
		ps.Close() // ends a receive waiting for a message
	}
}

// listen receives from ps until ctx ends, calling h.
func listen(ctx context.Context, ps *redis.PubSub, h Handler) {
	for pause := time.Duration(0); ctx.Err() == nil; {
		msg, err := ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if h.Failed != nil {
				h.Failed(err)
			}
			pause = min(max(2*pause, 100*time.Millisecond), 5*time.Second)
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
			continue
		}
		pause = 0
		switch m := msg.(type) {
		case *redis.Subscription:
			if (m.Kind == "subscribe" || m.Kind == "psubscribe") && h.Subscribed != nil {
				h.Subscribed()
			}
		case *redis.Message:
			if h.Message != nil {
				h.Message(m)
			}
		}
	}
}
