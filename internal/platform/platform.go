// Package platform opens the connections every role shares: the database
// (Postgres, or SQLite in the embedded mode) and Redis (a real server, or an
// in-process miniredis in the embedded mode).
package platform

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/glebarez/sqlite"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/plugin/dbresolver"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/models"
)

// Platform holds the shared connections of one process.
type Platform struct {
	DB    *gorm.DB
	Redis redis.UniversalClient
	// RedisOpt is what asynq clients, servers and inspectors connect with.
	RedisOpt asynq.RedisConnOpt

	closers []func() error
}

// Open connects to the database and Redis named by cfg, or starts the
// embedded ones, and fails when either does not answer. It does not migrate.
func Open(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Platform, error) {
	p := &Platform{}
	var err error
	if cfg.DatabaseURL == "" {
		p.DB, err = OpenSQLite(filepath.Join(cfg.DataDir, "domaind.db"))
	} else {
		p.DB, err = OpenPostgres(cfg.DatabaseURL, cfg.DatabaseMaxConns)
	}
	if err != nil {
		return nil, fmt.Errorf("open database (DOMAIND_DATABASE_URL): %w", err)
	}
	if cfg.DatabaseReplicaURL != "" {
		if err := UseReplica(p.DB, cfg.DatabaseReplicaURL, cfg.DatabaseMaxConns); err != nil {
			return nil, fmt.Errorf("open the read replica (DOMAIND_DATABASE_REPLICA_URL): %w", err)
		}
	}
	p.onClose(func() error {
		sqlDB, err := p.DB.DB()
		if err != nil {
			return err
		}
		return sqlDB.Close()
	})

	if cfg.RedisURL == "" {
		opt, stop, err := StartEmbeddedRedis()
		if err != nil {
			p.Close()
			return nil, err
		}
		p.onClose(func() error { stop(); return nil })
		p.RedisOpt = opt
		log.Info("embedded redis started", "addr", opt.Addr) // its password stays in this process
	} else if p.RedisOpt, err = config.ParseRedisURL(cfg.RedisURL); err != nil {
		p.Close()
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	p.Redis = p.RedisOpt.MakeRedisClient().(redis.UniversalClient)
	p.onClose(p.Redis.Close)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := p.Redis.Ping(pctx).Err(); err != nil {
		p.Close()
		return nil, fmt.Errorf("connect to redis (DOMAIND_REDIS_URL): %w", err)
	}
	return p, nil
}

func (p *Platform) onClose(f func() error) { p.closers = append(p.closers, f) }

// Close releases everything Open made, in reverse order.
func (p *Platform) Close() error {
	var errs []error
	for i := len(p.closers) - 1; i >= 0; i-- {
		errs = append(errs, p.closers[i]())
	}
	p.closers = nil
	return errors.Join(errs...)
}

// Check reports whether the database and Redis answer, naming the one that does not.
func (p *Platform) Check(ctx context.Context) map[string]error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res := map[string]error{"database": nil, "redis": nil}
	var wg sync.WaitGroup
	var mu sync.Mutex
	set := func(k string, err error) { mu.Lock(); res[k] = err; mu.Unlock() }
	wg.Go(func() {
		sqlDB, err := p.DB.DB()
		if err == nil {
			err = sqlDB.PingContext(ctx)
		}
		set("database", err)
	})
	wg.Go(func() { set("redis", pingRedis(ctx, p.Redis)) })
	wg.Wait()
	return res
}

// pingRedis asks the Redis server, or every master of a Redis Cluster (a
// PING reaches one node, and the cluster is usable only while each of its
// slots has a master that answers).
func pingRedis(ctx context.Context, c redis.UniversalClient) error {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return c.Ping(ctx).Err()
	}
	return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() })
}

// OpenPostgres opens a gorm handle on a Postgres URL with at most maxConns
// connections (DOMAIND_DATABASE_MAX_CONNS).
func OpenPostgres(url string, maxConns int) (*gorm.DB, error) {
	db, err := gorm.Open(postgres.Open(url), gormConfig())
	if err != nil {
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	// Idle connections are kept up to the open limit: closing one under a
	// burst and opening it again costs a Postgres backend start.
	sqlDB.SetMaxOpenConns(maxConns)
	sqlDB.SetMaxIdleConns(maxConns)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

// UseReplica registers the streaming replica at url, with at most
// maxConns connections, as db's models.ReplicaResolver: the reads of
// queries made with models.FromReplica go to it.
func UseReplica(db *gorm.DB, url string, maxConns int) error {
	r := dbresolver.Register(dbresolver.Config{Replicas: []gorm.Dialector{postgres.Open(url)}}, models.ReplicaResolver).
		SetMaxOpenConns(maxConns).SetMaxIdleConns(maxConns).SetConnMaxIdleTime(5 * time.Minute)
	return db.Use(r)
}

// OpenSQLite opens (creating if needed) a SQLite file in WAL mode. One
// connection serialises writers, which is what SQLite wants; the embedded
// mode is for trying the service, not for load.
func OpenSQLite(path string) (*gorm.DB, error) {
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	db, err := gorm.Open(sqlite.Open(dsn), gormConfig())
	if err != nil {
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(1)
	return db, nil
}

func gormConfig() *gorm.Config {
	return &gorm.Config{
		Logger:                 logger.Discard,
		NowFunc:                func() time.Time { return time.Now().UTC() },
		SkipDefaultTransaction: true,
		TranslateError:         true,
	}
}

// StartEmbeddedRedis starts an in-process miniredis on a loopback port and
// returns how to connect to it. It asks for a password made up for this
// start and never shown: the port is open to every local user of the
// machine, and the queues, sessions' limits and caches are not theirs. Its
// key TTLs only count down when its clock is advanced, so a ticker advances
// it every second (ClockTTL would be exact but makes asynq slow as keys
// grow). The returned stop func ends the ticker and the server.
func StartEmbeddedRedis() (asynq.RedisClientOpt, func(), error) {
	pw := make([]byte, 24)
	rand.Read(pw)
	m := miniredis.NewMiniRedis()
	m.RequireAuth(hex.EncodeToString(pw))
	if err := m.Start(); err != nil {
		return asynq.RedisClientOpt{}, nil, fmt.Errorf("start embedded redis: %w", err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				m.FastForward(time.Second)
			}
		}
	})
	opt := asynq.RedisClientOpt{Addr: m.Addr(), Password: hex.EncodeToString(pw)}
	return opt, func() { close(done); wg.Wait(); m.Close() }, nil
}
