-- A plain token bucket in one Lua script: the G4 baseline that redis-benchmark drives with EVALSHA.
-- KEYS[1] the bucket (a hash: tokens, ts); ARGV[1] tokens added per second; ARGV[2] capacity;
-- ARGV[3] tokens requested. Time is the server's. Returns {allowed (1 or 0), tokens left (floored)}.
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or capacity
local last = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - last) * rate / 1000)

local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) * 2 + 1000)
return {allowed, math.floor(tokens)}
