package config

import (
	"context"
	"errors"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// RedisClusterOpt is the connection option of a Redis Cluster whose
// clients reload the cluster's slot map after a connection error. go-redis
// reloads it on its own only on a MOVED or ASK answer, or once a minute,
// so after a master dies its clients would keep sending that master's
// slots to the dead address; reloading after the error finds the promoted
// replica as soon as the cluster has one.
type RedisClusterOpt struct{ asynq.RedisClusterClientOpt }

// MakeRedisClient implements asynq.RedisConnOpt.
func (o RedisClusterOpt) MakeRedisClient() any {
	c := o.RedisClusterClientOpt.MakeRedisClient().(*redis.ClusterClient)
	c.AddHook(reloadOnConnError{c})
	return c
}

// reloadOnConnError asks its cluster client for a fresh slot map after a
// command or pipeline fails on the connection rather than with an answer.
// Reloads run in the background and are coalesced by go-redis (one at a
// time, 200 ms apart), so a burst of errors costs one or two.
type reloadOnConnError struct{ c *redis.ClusterClient }

func (h reloadOnConnError) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadOnConnError) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.after(ctx, err)
		return err
	}
}

func (h reloadOnConnError) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.after(ctx, err)
		return err
	}
}

func (h reloadOnConnError) after(ctx context.Context, err error) {
	if connError(err) {
		h.c.ReloadState(ctx)
	}
}

// connError reports whether err is a failure to reach a node (refused,
// reset, timed out, closed) rather than an answer or the caller giving up.
func connError(err error) bool {
	var answer redis.Error
	return err != nil && !errors.As(err, &answer) && !errors.Is(err, context.Canceled)
}
