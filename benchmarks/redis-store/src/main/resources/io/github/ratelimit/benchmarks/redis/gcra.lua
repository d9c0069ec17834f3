-- A G20 anchor: the generic cell rate algorithm on one key, written for this benchmark. The key holds the
-- theoretical arrival time (TAT), in microseconds since the epoch. KEYS[1] the key; ARGV[1] emission interval in
-- microseconds (one permit's worth, may be below 1); ARGV[2] burst tolerance in microseconds (capacity times the
-- interval); ARGV[3] permits requested; ARGV[4] now in microseconds, or empty for the server's TIME.
-- A call is allowed when its new TAT is at most the tolerance ahead of now; then the TAT is SET with a time to live
-- of the tolerance (after which the key means what no key means: a full bucket). A rejected call writes nothing.
-- Doubles hold microseconds since the epoch to about 0.25 us, so an interval below that adds less than it should:
-- harmless where nothing is meant to be rejected, as in the benchmark.
-- Returns {allowed (1 or 0), microseconds to wait (0 when allowed)}.
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then
  tat = now
end
local next_tat = tat + interval * cost
local wait = next_tat - tolerance - now
if wait > 0 then
  return {0, math.ceil(wait)}
end
redis.call('SET', KEYS[1], string.format('%.17g', next_tat), 'PX', math.max(1, math.ceil(tolerance / 1000)))
return {1, 0}
