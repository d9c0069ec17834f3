-- A G20 anchor: a token bucket laid out as Spring Cloud Gateway's Redis rate limiter lays it out (two string keys,
-- both read with GET, both written with SETEX for twice the time the bucket takes to fill), written for this
-- benchmark from that description. KEYS[1] tokens left, KEYS[2] time of the last call (s since the epoch);
-- ARGV[1] tokens added per second; ARGV[2] capacity; ARGV[3] tokens requested. Time is the server's (TIME).
-- Returns {allowed (1 or 0), tokens left (floored)}.
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
local ttl = math.max(1, math.ceil(capacity / rate * 2))

local tokens = tonumber(redis.call('GET', KEYS[1])) or capacity
local last = tonumber(redis.call('GET', KEYS[2])) or now
local filled = math.min(capacity, tokens + math.max(0, now - last) * rate)

local allowed = 0
if filled >= requested then
  filled = filled - requested
  allowed = 1
end
redis.call('SETEX', KEYS[1], ttl, string.format('%.17g', filled))
redis.call('SETEX', KEYS[2], ttl, string.format('%.17g', now))
return {allowed, math.floor(filled)}
