package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Timeouts of every Redis connection, shorter than go-redis's defaults (5 s
// to dial, 3 s to read): a command to a dead node fails within a couple of
// seconds, so that a process follows a failover instead of waiting on it.
const (
	RedisDialTimeout = time.Second
	RedisIOTimeout   = 2 * time.Second
)

// ParseRedisURL turns DOMAIND_REDIS_URL into asynq connection options. The
// forms are:
//
//	redis://[user:password@]host:port[/db]         plain TCP
//	rediss://[user:password@]host:port[/db]        TLS
//	redis-sentinel://[user:password@]host1:port1,host2:port2[/db]?master=name[&sentinel_password=...]
//	redis-cluster://[user:password@]host1:port1,host2:port2
//
// rediss-sentinel:// and rediss-cluster:// are the sentinel and cluster
// forms over TLS (to the sentinels, the master and every node, each checked
// against its own host name). Every TLS form takes ?ca_file=/path/ca.pem,
// the PEM certificates of a private CA to trust instead of the system's.
//
// The go-redis client used for rate limits, caches and idempotency records is
// made from the same options (asynq.RedisConnOpt.MakeRedisClient), so both
// always talk to the same Redis.
func ParseRedisURL(raw string) (asynq.RedisConnOpt, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	q := u.Query()
	secure := strings.HasPrefix(u.Scheme, "rediss")
	var tlsConfig *tls.Config
	if secure {
		if tlsConfig, err = redisTLS(q.Get("ca_file")); err != nil {
			return nil, err
		}
	} else if q.Has("ca_file") {
		return nil, fmt.Errorf("ca_file is for the TLS forms (rediss://, rediss-sentinel://, rediss-cluster://)")
	}
	q.Del("ca_file")
	switch u.Scheme {
	case "redis", "rediss":
		u.RawQuery = q.Encode()
		o, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, err
		}
		if tlsConfig != nil {
			tlsConfig.ServerName = o.TLSConfig.ServerName
		}
		return asynq.RedisClientOpt{
			Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB, TLSConfig: tlsConfig,
			DialTimeout: RedisDialTimeout, ReadTimeout: RedisIOTimeout, WriteTimeout: RedisIOTimeout,
		}, nil
	case "redis-sentinel", "rediss-sentinel":
		if u.Host == "" || q.Get("master") == "" {
			return nil, fmt.Errorf("%s URL needs host:port[,host:port...] and ?master=<name>", u.Scheme)
		}
		db, err := dbNumber(u.Path)
		if err != nil {
			return nil, err
		}
		pw, _ := u.User.Password()
		return asynq.RedisFailoverClientOpt{
			MasterName: q.Get("master"), SentinelAddrs: strings.Split(u.Host, ","),
			SentinelPassword: q.Get("sentinel_password"), Username: u.User.Username(), Password: pw, DB: db,
			TLSConfig: tlsConfig, DialTimeout: RedisDialTimeout, ReadTimeout: RedisIOTimeout, WriteTimeout: RedisIOTimeout,
		}, nil
	case "redis-cluster", "rediss-cluster":
		if u.Host == "" {
			return nil, fmt.Errorf("%s URL needs host:port[,host:port...]", u.Scheme)
		}
		if strings.Trim(u.Path, "/") != "" {
			return nil, fmt.Errorf("%s URL takes no database number: Redis Cluster has only database 0", u.Scheme)
		}
		pw, _ := u.User.Password()
		return RedisClusterOpt{asynq.RedisClusterClientOpt{
			Addrs: strings.Split(u.Host, ","), Username: u.User.Username(), Password: pw, TLSConfig: tlsConfig,
			DialTimeout: RedisDialTimeout, ReadTimeout: RedisIOTimeout, WriteTimeout: RedisIOTimeout,
		}}, nil
	default:
		return nil, fmt.Errorf("want redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster://, got %q", u.Scheme+"://")
	}
}

// redisTLS is the TLS configuration of a Redis URL: TLS 1.2 at least, the
// server name taken from each address dialled, and caFile's certificates
// as the roots when it is set.
func redisTLS(caFile string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return c, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("ca_file: %w", err)
	}
	c.RootCAs = x509.NewCertPool()
	if !c.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca_file %s holds no PEM certificate", caFile)
	}
	return c, nil
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
