package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// ParseRedisURL turns DOMAIND_REDIS_URL into asynq connection options. The
// forms are:
//
//	redis://[user:password@]host:port[/db]         plain TCP
//	rediss://[user:password@]host:port[/db]        TLS
//	redis-sentinel://[user:password@]host1:port1,host2:port2[/db]?master=name[&sentinel_password=...]
//	redis-cluster://[user:password@]host1:port1,host2:port2
//
// The go-redis client used for rate limits, caches and idempotency records is
// made from the same options (asynq.RedisConnOpt.MakeRedisClient), so both
// always talk to the same Redis.
func ParseRedisURL(raw string) (asynq.RedisConnOpt, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	switch u.Scheme {
	case "redis", "rediss":
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, err
		}
		return asynq.RedisClientOpt{
			Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB, TLSConfig: o.TLSConfig,
		}, nil
	case "redis-sentinel":
		q := u.Query()
		if u.Host == "" || q.Get("master") == "" {
			return nil, fmt.Errorf("redis-sentinel URL needs host:port[,host:port...] and ?master=<name>")
		}
		db, err := dbNumber(u.Path)
		if err != nil {
			return nil, err
		}
		pw, _ := u.User.Password()
		return asynq.RedisFailoverClientOpt{
			MasterName: q.Get("master"), SentinelAddrs: strings.Split(u.Host, ","),
			SentinelPassword: q.Get("sentinel_password"), Username: u.User.Username(), Password: pw, DB: db,
		}, nil
	case "redis-cluster":
		if u.Host == "" {
			return nil, fmt.Errorf("redis-cluster URL needs host:port[,host:port...]")
		}
		if strings.Trim(u.Path, "/") != "" {
			return nil, fmt.Errorf("redis-cluster URL takes no database number: Redis Cluster has only database 0")
		}
		pw, _ := u.User.Password()
		return asynq.RedisClusterClientOpt{
			Addrs: strings.Split(u.Host, ","), Username: u.User.Username(), Password: pw,
		}, nil
	default:
		return nil, fmt.Errorf("want redis://, rediss://, redis-sentinel:// or redis-cluster://, got %q", u.Scheme+"://")
	}
}

func dbNumber(path string) (int, error) {
	path = strings.Trim(path, "/")
	if path == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(path)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("database number in the path must be a non-negative integer, got %q", path)
	}
	return n, nil
}
