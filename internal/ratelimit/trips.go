package ratelimit

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// A leased policy's log has one entry per trip to Redis, not one per unit:
// a trip's units are all logged at the same time (its lease's end), so an
// entry with a count holds the same information, and a trip of 64 units
// costs Redis one sorted-set entry instead of 64 (which was most of a
// bursting client's script time). The sorted set (the first key) holds the
// trips, scored as units are; the hash beside it (tripKeys) holds how many
// units each trip still counts, and under "#" how many the log holds in
// all.

// A trip is the units of one trip that a lease has not spent yet.
type trip struct {
	name string
	left int
}

// tripKeys are the keys of a leased log: the sorted set and the hash of
// counts. rateKey braces a leased log's name, so both land in one Redis
// Cluster slot, as a script's keys must.
func tripKeys(key string) []string { return []string{key, key + ":n"} }

// tripsLua declares what the trip scripts share: now, window and limit
// (ARGV 1 to 3), the log's total n, giveBack, which takes back units from
// trips (ARGV pairs of name and count from the index given; a trip already
// gone is skipped), and freeing, the score of the trip whose leaving puts
// the log below limit (entries as ZRANGE WITHSCORES gives them, oldest
// first, and their counts).
const tripsLua = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local n = tonumber(redis.call('HGET', KEYS[2], '#') or '0')
local function giveBack(from)
  for i = from, #ARGV, 2 do
    local c = tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or '0')
    local k = math.min(tonumber(ARGV[i + 1]), c)
    if k > 0 then
      n = n - k
      if k == c then
        redis.call('HDEL', KEYS[2], ARGV[i])
        redis.call('ZREM', KEYS[1], ARGV[i])
      else
        redis.call('HSET', KEYS[2], ARGV[i], c - k)
      end
    end
  end
end
local function names(entries)
  local out = {}
  for i = 1, #entries, 2 do out[#out + 1] = entries[i] end
  return out
end
local function freeing(entries, counts, total)
  for i = 1, #counts do
    total = total - tonumber(counts[i] or '0')
    if total < limit then return tonumber(entries[2 * i]) end
  end
  return tonumber(entries[#entries])
end
`

// tripSpendScript is slidingScript for a leased log: it takes up to want
// units in one trip named ARGV[6], logged at ARGV[4], after giving back
// the units of the trips from ARGV[7] on, and returns {allowed, remaining,
// retry_after_us, reset_after_us, granted}. More than one unit only up to
// half of what is left, so that another process serving the same client
// finds the rest. A refused trip is not recorded.
var tripSpendScript = redis.NewScript(tripsLua + `
local score = tonumber(ARGV[4])
local want = tonumber(ARGV[5])
giveBack(7)
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - window)
if #old > 0 then
  for _, c in ipairs(redis.call('HMGET', KEYS[2], unpack(old))) do n = n - tonumber(c or '0') end
  redis.call('HDEL', KEYS[2], unpack(old))
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
end
if n >= limit then
  local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  if #entries > 0 then
    redis.call('HSET', KEYS[2], '#', n)
    local at = freeing(entries, redis.call('HMGET', KEYS[2], unpack(names(entries))), n)
    return {0, 0, at + window - now, tonumber(entries[#entries]) + window - now, 0}
  end
  n = 0 -- a total that outlived its trips
end
local grant = math.min(want, math.max(1, math.floor((limit - n) / 2)))
redis.call('ZADD', KEYS[1], score, ARGV[6])
redis.call('HSET', KEYS[2], ARGV[6], grant, '#', n + grant)
local ttl = math.ceil((score - now + window) / 1000)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return {1, limit - n - grant, 0, score - now + window, grant}
`)

// tripStatusScript is statusScript for a leased log.
var tripStatusScript = redis.NewScript(tripsLua + `
local entries = redis.call('ZRANGEBYSCORE', KEYS[1], now - window + 1, '+inf', 'WITHSCORES')
if #entries == 0 then return {1, limit, 0, 0} end
local counts = redis.call('HMGET', KEYS[2], unpack(names(entries)))
local total = 0
for _, c in ipairs(counts) do total = total + tonumber(c or '0') end
local reset = tonumber(entries[#entries]) + window - now
if total >= limit then return {0, 0, freeing(entries, counts, total) + window - now, reset} end
return {1, limit - total, 0, reset}
`)

// tripUnspendScript gives back units of trips (ARGV pairs of name and
// count from ARGV[4]; ARGV 1 to 3 are unused) and returns {total}.
var tripUnspendScript = redis.NewScript(tripsLua + `
giveBack(4)
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], '#', n) end
return {n}
`)

// spendTrip runs tripSpendScript: a trip of up to want units for key,
// logged at until, giving back the trips stale first.
func (l *Limiter) spendTrip(ctx context.Context, p Policy, key, name string, now, until time.Time, want int, stale []trip) ([]int64, error) {
	args := []any{now.UnixMicro(), p.Window.Microseconds(), p.Limit, until.UnixMicro(), want, name}
	for _, t := range stale {
		args = append(args, t.name, t.left)
	}
	v, err := l.batch.run(ctx, tripSpendScript, tripKeys(key), args...)
	if err != nil {
		return nil, limitErr(p, err)
	}
	return v, nil
}

// unspendTrips gives back the units of trips to key's log.
func (l *Limiter) unspendTrips(ctx context.Context, key string, trips []trip) error {
	args := []any{0, 0, 0}
	for _, t := range trips {
		args = append(args, t.name, t.left)
	}
	_, err := l.batch.run(ctx, tripUnspendScript, tripKeys(key), args...)
	return err
}
