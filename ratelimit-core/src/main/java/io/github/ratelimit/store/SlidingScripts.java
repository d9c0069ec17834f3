package io.github.ratelimit.store;

/**
 * The scripts of the sliding-window algorithms in Redis: one script per operation, so a decision is one round
 * trip and atomic across every window. The arithmetic is the same as in this JVM ({@link SlidingLogState},
 * {@link SlidingCounterState}), in microseconds.
 *
 * <p>Common arguments: ARGV[1] the time in microseconds since the epoch, or '' to read the server's
 * {@code TIME}; ARGV[2] the cost; ARGV[3] the operation: {@code p} takes the cost now if it fits, {@code r}
 * takes it at the earliest time within ARGV[4] microseconds, {@code f} forgets the call counted at ARGV[4]
 * microseconds (its receipt); ARGV[5] a member unique to this call (the log's); ARGV[6] milliseconds the key
 * outlives its last call's relevance; ARGV[7] the number of windows, then each window's period in microseconds
 * and limit, then the earliest a reserved call will run, in microseconds from now. The reply of {@code p} and {@code r} is {consumed (0 or 1), wait in microseconds (-1: never), the
 * time the call was counted at (its receipt, 0 when not counted), then per window the remaining permits and
 * microseconds until it is empty}. A key's expiry is only ever extended.
 */
final class SlidingScripts {

    private static final String COMMON = """
            local key = KEYS[1]
            local now
            if ARGV[1] == '' then
              local t = redis.call('TIME')
              now = tonumber(t[1]) * 1000000 + tonumber(t[2])
            else
              now = tonumber(ARGV[1])
            end
            local cost = tonumber(ARGV[2])
            local op = ARGV[3]
            local maxWait = tonumber(ARGV[4])
            local member = ARGV[5]
            local keep = tonumber(ARGV[6])
            local n = tonumber(ARGV[7])
            local W, N, P = {}, {}, {}
            local longest = 0
            for i = 1, n do
              P[i] = ARGV[6 + 2 * i]
              W[i] = tonumber(P[i])
              N[i] = tonumber(ARGV[7 + 2 * i])
              if W[i] > longest then longest = W[i] end
            end
            -- After the windows: the earliest a reserved call will run, in microseconds from now.
            local minWait = tonumber(ARGV[8 + 2 * n]) or 0
            local function fmt(x) return string.format('%d', x) end
            -- Never shortens the key's life: another instance may count by a longer window.
            local function expire(ms)
              if ms > redis.call('PTTL', key) then redis.call('PEXPIRE', key, fmt(ms)) end
            end
            """;

    /** The log: a sorted set of calls scored by time, members unique per call; each counts as the rule's cost. */
    static final String LOG = COMMON + """
            -- Trim what no instance counts any more: the key's time to live says how long a window the instance
            -- that set it counts by (it is set from the newest call and never shortened), which may be longer
            -- than this caller's during a rolling deploy or while per-key limits differ between instances.
            local pttl = redis.call('PTTL', key)
            local top = redis.call('ZREVRANGE', key, 0, 0, 'WITHSCORES')
            local last = nil
            if top[2] then last = tonumber(top[2]) end
            local horizon = longest
            if pttl > 0 and last then
              local other = pttl * 1000 + now - last - keep * 1000
              if other > horizon then horizon = other end
            end
            redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - horizon))
            if op == 'f' then
              local m = redis.call('ZRANGEBYSCORE', key, fmt(maxWait), fmt(maxWait), 'LIMIT', 0, 1)
              if m[1] then redis.call('ZREM', key, m[1]) end
              return {0}
            end
            local U = {}
            local at = now
            for i = 1, n do
              U[i] = redis.call('ZCOUNT', key, '(' .. fmt(now - W[i]), '+inf') * cost
              if cost > N[i] then at = -1 end
              if at >= 0 and U[i] + cost > N[i] then
                local room = math.floor((N[i] - cost) / cost)
                local e = redis.call('ZREVRANGE', key, room, room, 'WITHSCORES')
                local t = tonumber(e[2]) + W[i]
                if t > at then at = t end
              end
            end
            if op == 'r' and at >= 0 and at < now + minWait then at = now + minWait end
            if last and last <= now - horizon then last = nil end
            local consumed = 0
            local receipt = 0
            if at >= 0 and (at == now or (op == 'r' and at - now <= maxWait)) then
              redis.call('ZADD', key, fmt(at), member)
              consumed = 1
              receipt = at
              if last == nil or at > last then last = at end
              if pttl < 0 or math.ceil((last + longest - now) / 1000) + keep > pttl then
                redis.call('PEXPIRE', key, fmt(math.ceil((last + longest - now) / 1000) + keep))
              end
              -- Every count is of the entries later than now - W, a call logged for later included.
              for i = 1, n do U[i] = U[i] + cost end
            end
            local wait = -1
            if at >= 0 then wait = at - now end
            local out = {consumed, wait, receipt}
            for i = 1, n do
              local rem = N[i] - U[i]
              if rem < 0 then rem = 0 end
              local reset = 0
              if last and last > now - W[i] then reset = last + W[i] - now end
              out[#out + 1] = rem
              out[#out + 1] = reset
            end
            return out
            """;

    /**
     * The counters: a hash with a field {@code <period>:<interval>} per window and interval. Fields of periods this
     * caller's rule does not have are left to expire with the key (another instance may still use them).
     */
    static final String COUNTER = COMMON + """
            local c = {}
            local byPeriod = {}
            for i = 1, n do
              c[i] = {}
              byPeriod[P[i]] = i
            end
            local fields = redis.call('HGETALL', key)
            for j = 1, #fields, 2 do
              local p, k = string.match(fields[j], '^(%d+):(%-?%d+)$')
              local i = p and byPeriod[p]
              if i then
                local idx = tonumber(k)
                if idx >= math.floor(now / W[i]) - 1 and tonumber(fields[j + 1]) > 0 then
                  c[i][idx] = tonumber(fields[j + 1])
                else
                  redis.call('HDEL', key, fields[j])
                end
              end
            end
            local function countFrom(i, k)
              local s = 0
              for idx, v in pairs(c[i]) do
                if idx >= k then s = s + v end
              end
              return s
            end
            local function lastCounted(i)
              local m = nil
              for idx, v in pairs(c[i]) do
                if v > 0 and (m == nil or idx > m) then m = idx end
              end
              return m
            end
            local function load(i, t)
              local k = math.floor(t / W[i])
              local off = t - k * W[i]
              return countFrom(i, k) + (c[i][k - 1] or 0) * ((W[i] - off) / W[i])
            end
            local function earliest(i)
              if cost > N[i] then return -1 end
              local k = math.floor(now / W[i])
              local last = lastCounted(i) or (k - 1)
              while true do
                local later = countFrom(i, k)
                local start = k * W[i]
                if later + cost <= N[i] then
                  local prev = c[i][k - 1] or 0
                  if prev == 0 then return math.max(now, start) end
                  local room = N[i] - cost - later
                  local off = math.ceil((prev - room) * W[i] / prev)
                  if off < W[i] then return math.max(now, start + off) end
                end
                if k > last + 2 then return math.max(now, start) end
                k = k + 1
              end
            end
            if op == 'f' then
              for i = 1, n do
                local k = math.floor(maxWait / W[i])
                local held = c[i][k]
                if held and held > 0 then
                  local field = P[i] .. ':' .. fmt(k)
                  if held <= cost then
                    redis.call('HDEL', key, field)
                  else
                    redis.call('HINCRBY', key, field, -cost)
                  end
                end
              end
              return {0}
            end
            local at = now
            for i = 1, n do
              local e = earliest(i)
              if e < 0 then at = -1 break end
              if e > at then at = e end
            end
            if op == 'r' and at >= 0 and at < now + minWait then at = now + minWait end
            local consumed = 0
            local receipt = 0
            if at >= 0 and (at == now or (op == 'r' and at - now <= maxWait)) then
              local horizon = 0
              for i = 1, n do
                local k = math.floor(at / W[i])
                c[i][k] = (c[i][k] or 0) + cost
                redis.call('HINCRBY', key, P[i] .. ':' .. fmt(k), cost)
                local u = (lastCounted(i) + 2) * W[i] - now
                if u > horizon then horizon = u end
              end
              expire(math.ceil(horizon / 1000) + keep)
              consumed = 1
              receipt = at
            end
            local wait = -1
            if at >= 0 then wait = at - now end
            local out = {consumed, wait, receipt}
            for i = 1, n do
              local rem = math.floor(N[i] - load(i, now) + 1e-9)
              if rem < 0 then rem = 0 end
              local last = lastCounted(i)
              local reset = 0
              if last then reset = math.max(0, (last + 2) * W[i] - now) end
              out[#out + 1] = rem
              out[#out + 1] = reset
            end
            return out
            """;

    private SlidingScripts() {
    }
}
