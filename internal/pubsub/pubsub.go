// Package pubsub reads a Redis subscription for as long as a process
// needs it. A failed receive is tried again after a pause that grows to 5
// seconds (go-redis subscribes again on a new connection), and the caller
// hears each time the subscription is made, first and again: whatever was
// published while it was down is lost, and the caller catches up.
package pubsub

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Handler is what Listen tells its caller. Every field may be nil.
type Handler struct {
	// Subscribed is called each time the server confirms a subscription
	// of ps (a SUBSCRIBE or PSUBSCRIBE): at first and after a reconnect.
	Subscribed func()
	// Message is called with each message, in order.
	Message func(*redis.Message)
	// Failed is called with each failed receive, before the pause.
	Failed func(error)
}

// Listen receives from ps until ctx ends, calling h. Close ps after ctx
// ends, to end a receive that waits for a message.
func Listen(ctx context.Context, ps *redis.PubSub, h Handler) {
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
