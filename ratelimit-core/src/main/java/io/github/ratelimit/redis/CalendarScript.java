package io.github.ratelimit.redis;

import io.github.ratelimit.Rule;

/**
 * The script of calendar quotas ({@code 1000/1mo@Europe/Berlin}) in Redis: a hash with one count per window and
 * window start, field {@code <window>|<start in microseconds>} ({@code 1mo@Europe/Berlin|1769900400000000}), for the
 * window now open and the next one. The caller computes each window's bounds from the calendar (Lua knows no time
 * zones); the script checks them against the time it decides at and answers {@code {2, now}} when they do not hold
 * it (a boundary passed, or the caller's clock is off), so the caller computes them again from that time.
 *
 * <p>Arguments: ARGV[1] the time in microseconds since the epoch, or '' for the server's {@code TIME}; ARGV[2] the
 * cost; ARGV[3] the operation, {@code p} takes the cost now if it fits, {@code k} says whether it would (a peek),
 * {@code r} takes it at the earliest time within ARGV[4] microseconds, {@code f} gives back the call counted at
 * ARGV[4] microseconds, {@code c} (a charge) counts the cost more for the call counted at ARGV[4] microseconds, in its
 * window, or in the open one when that has ended, as far as no count goes more than its window's debt bound past the
 * limit (a count above the limit is debt, owed until the window ends), and answers {0, repaired, the tokens
 * counted}; ARGV[5] milliseconds the key outlives its windows; ARGV[6] the number of windows, then for
 * each its name, the start and end of its open window, the end of the next, and its limit; last, the earliest a
 * reserved call runs, in microseconds from now.
 *
 * <p>Worst case per call: one {@code HGETALL} of at most {@link #HARD_FIELDS} fields and a constant number of
 * commands per window. What the script reads it validates: a key of another type or with more fields, a field that is
 * not {@code <name>|<integer>}, a count that is not a positive integer of at most 17 digits, or a count more than any
 * limit and {@value StoredBucketCheck#DEBT_FACTOR} times the largest debt bound make ({@link SlidingScripts#DEBT_BOUND};
 * not this rule's own limit, which may have been lowered while the key held more), is garbage, replaced.
 */
final class CalendarScript {

    /** Beyond this many fields a key is garbage: two per window of the most windows, twice (two instances' limits). */
    static final int HARD_FIELDS = 4 * Rule.MAX_LIMITS;

    static final String SOURCE = SlidingScripts.KEY_AND_NOW + SlidingScripts.DEBT_BOUND + """
            local cost = tonumber(ARGV[2])
            local op = ARGV[3]
            local arg = tonumber(ARGV[4])
            local keep = tonumber(ARGV[5])
            local n = tonumber(ARGV[6])
            local NAME, S, E, X, N, D = {}, {}, {}, {}, {}, {}
            for i = 1, n do
              local b = 6 + 5 * (i - 1)
              NAME[i] = ARGV[b + 1]
              S[i] = tonumber(ARGV[b + 2])
              E[i] = tonumber(ARGV[b + 3])
              X[i] = tonumber(ARGV[b + 4])
              N[i] = tonumber(ARGV[b + 5])
              -- By the open window's length (a calendar window's, 23 hours or more, owes its limit).
              D[i] = debtBound(E[i] - S[i], N[i])
            end
            local minWait = tonumber(ARGV[7 + 5 * n]) or 0
            local function fmt(x) return string.format('%%d', x) end
            local repaired = 0
            local t = redis.call('TYPE', key).ok
            if t ~= 'none' and (t ~= 'hash' or redis.call('HLEN', key) > %d) then
              redis.call('UNLINK', key)
              repaired = 1
            end
            -- The bounds must hold the time decided at, a refund's too: fields are kept or dropped by them.
            local span = 0
            for i = 1, n do
              if now < S[i] or now >= E[i] then return {2, now} end
              if X[i] - S[i] > span then span = X[i] - S[i] end
            end
            -- A field of a window this rule does not have (another instance's limits) goes once it is that old.
            local stale = now - span - 32 * 86400000000
            -- Counts of the open and the next window; fields of older windows of these names go, garbage too.
            local C, NC = {}, {}
            local byName = {}
            for i = 1, n do
              C[i] = 0
              NC[i] = 0
              byName[NAME[i]] = i
            end
            local fields = redis.call('HGETALL', key)
            for j = 1, #fields, 2 do
              local f = fields[j]
              local name, start = string.match(f, '^([^|]+)|(%%-?%%d+)$')
              local s = start and tonumber(start)
              local raw = fields[j + 1]
              local v = string.match(raw, '^[1-9]%%d*$') and #raw <= 17 and tonumber(raw)
              local i = s and byName[name]
              -- Garbage past what any limit and its debt could make, not past this rule's own: a limit lowered at run
              -- time (a plan, a rule change) keeps the key's usage, however far above it.
              if not s or fmt(s) ~= start or not v or v > MOST then
                redis.call('HDEL', key, f)
                repaired = 1
              else
                if not i and s < stale then
                  redis.call('HDEL', key, f)
                elseif i then
                  if s == S[i] then C[i] = v
                  elseif s == E[i] then NC[i] = v
                  elseif s < S[i] then redis.call('HDEL', key, f)
                  else
                    redis.call('HDEL', key, f)
                    repaired = 1
                  end
                end
              end
            end
            local function expire()
              local ms = 0
              for i = 1, n do
                local till = E[i]
                if NC[i] > 0 then till = X[i] end
                local m = math.ceil((till - now) / 1000) + keep
                if m > ms then ms = m end
              end
              if ms > redis.call('PTTL', key) then redis.call('PEXPIRE', key, fmt(ms)) end
            end
            if op == 'c' then
              -- The call's window: the next one for a delayed call counted there, else the open one (an ended window
              -- owes nothing more).
              local taken = cost
              local later = {}
              for i = 1, n do
                later[i] = arg >= E[i] and arg < X[i]
                local count = C[i]
                if later[i] then count = NC[i] end
                local room = N[i] + D[i] - count
                if room < taken then taken = room end
              end
              if taken < 0 then taken = 0 end
              if taken > 0 then
                for i = 1, n do
                  if later[i] then
                    NC[i] = NC[i] + taken
                    redis.call('HINCRBY', key, NAME[i] .. '|' .. fmt(E[i]), fmt(taken))
                  else
                    C[i] = C[i] + taken
                    redis.call('HINCRBY', key, NAME[i] .. '|' .. fmt(S[i]), fmt(taken))
                  end
                end
                expire()
              end
              return {0, repaired, taken}
            end
            if op == 'f' then
              for i = 1, n do
                local which = nil
                if arg >= S[i] and arg < E[i] then which = S[i] elseif arg >= E[i] and arg < X[i] then which = E[i] end
                if which then
                  local f = NAME[i] .. '|' .. fmt(which)
                  local v = (which == S[i]) and C[i] or NC[i]
                  if v <= cost then redis.call('HDEL', key, f) else redis.call('HINCRBY', key, f, -cost) end
                end
              end
              return {0, repaired}
            end
            -- The earliest time the cost fits: now, or the end of the fullest window; later, only the next windows.
            local at = now
            for i = 1, n do
              if cost > N[i] then at = -1 break end
              if C[i] + cost > N[i] and E[i] > at then at = E[i] end
            end
            if op == 'r' and at >= 0 and at < now + minWait then at = now + minWait end
            -- A call is counted in the open or the next window of each limit, never further (nothing is there).
            local beyond = false
            if at >= 0 then
              for i = 1, n do
                local count = 0
                if at < E[i] then count = C[i] elseif at < X[i] then count = NC[i] else beyond = true end
                if count + cost > N[i] then at = -1 break end
              end
            end
            local consumed = 0
            local receipt = 0
            if op == 'k' then
              if at == now then consumed = 1 end
            elseif at >= 0 and (at == now or (op == 'r' and at - now <= arg and not beyond)) then
              for i = 1, n do
                if at < E[i] then
                  C[i] = C[i] + cost
                  redis.call('HINCRBY', key, NAME[i] .. '|' .. fmt(S[i]), cost)
                else
                  NC[i] = NC[i] + cost
                  redis.call('HINCRBY', key, NAME[i] .. '|' .. fmt(E[i]), cost)
                end
              end
              consumed = 1
              receipt = at
              expire()
            end
            local wait = -1
            if at >= 0 then wait = at - now end
            local out = {consumed, wait, receipt, repaired}
            for i = 1, n do
              local rem = N[i] - C[i]
              if rem < 0 then rem = 0 end
              local reset = 0
              if C[i] > 0 or NC[i] > 0 then reset = E[i] - now end
              out[#out + 1] = rem
              out[#out + 1] = reset
            end
            return out
            """.formatted(HARD_FIELDS);

    private CalendarScript() {}
}
