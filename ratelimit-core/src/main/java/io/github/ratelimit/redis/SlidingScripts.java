package io.github.ratelimit.redis;

import io.github.ratelimit.Limit;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.bucket.DebtBound;

/**
 * The scripts of the sliding-window algorithms in Redis: one script run per operation (the counter's performs a run of
 * operations of one key, each as alone: {@link #COUNTER_RUN}), so a decision is one round trip and atomic across every
 * window. The arithmetic is the same as in this JVM (the local store's {@code SlidingLogState} and
 * {@code SlidingCounterState}), in microseconds.
 *
 * <p>Common arguments: ARGV[1] the time in microseconds since the epoch, or '' to read the server's
 * {@code TIME}; ARGV[2] the cost; ARGV[3] the operation: {@code p} takes the cost now if it fits, {@code r}
 * takes it at the earliest time within ARGV[4] microseconds, {@code f} forgets the call counted at ARGV[4]
 * microseconds (its receipt), {@code c} (a charge, the counters' only) counts the cost more for the call counted at
 * ARGV[4] microseconds, {@code k} (a peek) says whether the cost fits now and when it would, taking nothing; ARGV[5]
 * a member unique to this call (the log's); ARGV[6] milliseconds the key outlives its last call's relevance; ARGV[7] the number of windows, then each window's period in microseconds
 * and limit, then the earliest a reserved call will run, in microseconds from now. The reply of {@code p} and
 * {@code r} is {consumed (0 or 1), wait in microseconds (-1: never), the time the call was counted at (its
 * receipt, 0 when not counted), repaired (0 or 1), then per window the remaining permits and microseconds until
 * it is empty}; the reply of {@code f} is {0, repaired}, of {@code c} {0, repaired, the tokens counted}. A key's
 * expiry is only ever extended.
 *
 * <p><b>What Redis holds is validated, never obeyed</b> (a typo in {@code redis-cli}, a migration bug): a key of
 * the wrong type, one holding more entries than any rule can make, an entry that is not a number, a negative
 * count or one more than any limit and {@value StoredBucketCheck#DEBT_FACTOR} times the largest debt bound make (a
 * charge's debt is legitimate, {@link DebtBound}, and so is usage above a limit lowered at run time), or a call dated further ahead than any delay allows
 * ({@link Rule#MAX_DELAY_LIMIT}) is replaced with fresh state, and the reply says so ({@code repaired}), which the store counts. A key that
 * exists without an expiry gets one. So garbage costs at most the calls it forgets, and is gone after one call.
 *
 * <p><b>Work per call is bounded by the rule, never by what is stored or by how many callers wait</b>: the
 * log's commands are logarithmic in its size (at most {@value #LOG_HARD_CALLS} calls; a larger log is garbage
 * and replaced), and it removes at most {@value #LOG_TRIM_PER_CALL} entries per call; the counter reads its hash
 * once, at most {@value #COUNTER_HARD_FIELDS} entries (a larger hash is garbage and replaced), and finds the earliest time a call fits in one pass over them; a
 * reservation that would take its windows past {@link Rule#MAX_COUNTER_DELAY_INTERVALS} intervals, plus three
 * per window, is refused (rejected, as if beyond its maximum delay), so the entries, and the work, stay bounded
 * whatever the number of waiters. {@code docs/RELIABILITY.md} gives the measured worst cases.
 */
final class SlidingScripts {

    /** How far ahead of now a call may legitimately be counted, in microseconds: the longest delay, and a minute. */
    static final long AHEAD_MICROS = Rule.MAX_DELAY_LIMIT.toNanos() / 1_000 + 60_000_000L;

    /**
     * Beyond this many entries a counter hash is garbage, replaced whole: twice what one rule's windows hold at the
     * most ({@link Rule#MAX_COUNTER_DELAY_INTERVALS} and three per window, for {@link Rule#MAX_LIMITS} windows), so
     * two instances that count one key by different windows never reach it.
     */
    static final int COUNTER_HARD_FIELDS = 2 * (Rule.MAX_COUNTER_DELAY_INTERVALS + 3 * Rule.MAX_LIMITS);

    /** The most entries one call of the log removes; more wait for later calls, uncounted meanwhile. */
    static final int LOG_TRIM_PER_CALL = 100;

    /** Beyond this many calls a log is garbage, replaced whole: no rule's log holds more than half of it. */
    static final long LOG_HARD_CALLS = 2 * Rule.MAX_LOG_CALLS;

    /**
     * Lua: {@code debtBound(w, limit)}, the most a window of {@code limit} calls per {@code w} microseconds may owe
     * (as {@link DebtBound#of}: a day of refill, or its limit when more, at most {@link DebtBound#CEILING});
     * {@code DEBT_FACTOR}, how many times that bound a stored count may owe before it is garbage
     * ({@link StoredBucketCheck#DEBT_FACTOR}, as for buckets); and {@code MOST}, the largest count any window of any
     * limit may hold, for another instance's windows.
     */
    static final String DEBT_BOUND = """
            local DEBT_DAY, DEBT_CEILING, DEBT_FACTOR = %d, %d, %d
            local function debtBound(w, limit)
              local d = math.floor(DEBT_DAY / w) * limit
              if d < limit then d = limit end
              if d > DEBT_CEILING then d = DEBT_CEILING end
              return d
            end
            local MOST = %d + DEBT_FACTOR * DEBT_CEILING
            """.formatted(
            DebtBound.MAX_DEBT_NANOS / 1_000, DebtBound.CEILING, StoredBucketCheck.DEBT_FACTOR, Limit.MAX_PERMITS);

    /** Lua: the key, and the time decided at, {@code now}: ARGV[1] microseconds, or the server's {@code TIME}. */
    static final String KEY_AND_NOW = """
            local key = KEYS[1]
            local now
            if ARGV[1] == '' then
              local t = redis.call('TIME')
              now = tonumber(t[1]) * 1000000 + tonumber(t[2])
            else
              now = tonumber(ARGV[1])
            end
            """;

    private static final String COMMON = KEY_AND_NOW + """
            local cost = tonumber(ARGV[2])
            local op = ARGV[3]
            local maxWait = tonumber(ARGV[4])
            local member = ARGV[5]
            local keep = tonumber(ARGV[6])
            """ + windowsOf("ARGV") + """
            -- After the windows: the earliest a reserved call will run, in microseconds from now.
            local minWait = tonumber(ARGV[8 + 2 * n]) or 0
            local AHEAD = %d
            local repaired = 0
            local function fmt(x) return string.format('%%d', x) end
            """.formatted(AHEAD_MICROS);

    /**
     * The log: a sorted set of calls scored by time, members unique per call; each counts as the rule's cost.
     *
     * <p>Worst case per call: a constant number of commands, each logarithmic in the log's size, and removals of at
     * most {@value #LOG_TRIM_PER_CALL} entries of each kind (calls no window counts any more, calls dated beyond
     * any delay, the oldest calls past {@link Rule#MAX_LOG_CALLS}, more than any window holds): more is left to later
     * calls, and is not counted meanwhile (windows count only calls between {@code now - W} and the furthest a
     * delay reaches).
     */
    static final String LOG = COMMON
            + sizeOrReplace("ZCARD", LOG_HARD_CALLS)
            + """
            local TRIM = %d
            local future = fmt(now + AHEAD)
            -- What Redis holds is read only while the key exists (size counts its entries as this call changes it).
            local G = 0
            local pttl = -2
            local last = nil
            if size > 0 then
              -- The newest call; those dated beyond the longest delay cannot have been made by any rule: forget them,
              -- the latest first.
              local top = redis.call('ZREVRANGE', key, 0, 0, 'WITHSCORES')
              if tonumber(top[2]) > tonumber(future) then
                G = redis.call('ZCOUNT', key, '(' .. future, '+inf')
                size = size - redis.call('ZREMRANGEBYRANK', key, -math.min(G, TRIM), -1)
                G = G - math.min(G, TRIM)
                repaired = 1
                top = redis.call('ZREVRANGEBYSCORE', key, future, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
              end
              if top[2] then last = tonumber(top[2]) end
              if size > 0 then pttl = redis.call('PTTL', key) end
            end
            -- The key's expiry as this call leaves it: -2 gone, -1 none (kept apart from pttl, the one it found).
            local ttl = pttl
            -- Trim what no instance counts any more: the key's time to live says how long a window the instance
            -- that set it counts by (it is set from the newest call and never shortened), which may be longer
            -- than this caller's during a rolling deploy or while per-key limits differ between instances.
            local horizon = longest
            if pttl > 0 and last then
              local other = math.min(pttl * 1000, %d) + now - last - keep * 1000
              if other > horizon then horizon = other end
            end
            -- The calls a window of w counts (those later than now - w, up to future): none, unread, when the last
            -- call is older (nothing this call removes makes one newer).
            local function counted(w)
              if size == 0 or not last or last <= now - w then return 0 end
              return redis.call('ZCOUNT', key, '(' .. fmt(now - w), future)
            end
            -- The calls the longest window counts; the others, not dated beyond the longest delay, are older.
            local inLongest = counted(longest)
            -- Those older than the horizon are among them (it is at least the longest window): none when there are
            -- none; at most TRIM, all removed by score; more, the oldest TRIM of them.
            local old = size - G - inLongest
            if old > 0 and old <= TRIM then
              size = size - redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - horizon))
            elseif old > 0 then
              if horizon > longest then old = redis.call('ZCOUNT', key, '-inf', fmt(now - horizon)) end
              if old > 0 then size = size - redis.call('ZREMRANGEBYRANK', key, 0, math.min(old, TRIM) - 1) end
            end
            if size == 0 then ttl = -2 end
            -- No rule's window holds more calls than KEEP: past that, the oldest go (a busy instance's calls kept
            -- for another's longer window, after a change of limits), so the log never grows into garbage.
            local excess = size - %d
            if excess > 0 then
              size = size - redis.call('ZREMRANGEBYRANK', key, 0, math.min(excess, TRIM) - 1)
              -- Some of them may have been in the window: counted again.
              inLongest = nil
            end
            local function life()
              return math.ceil((last + longest - now) / 1000) + keep
            end
            -- Every path that leaves the key keeps an expiry: one without is given one.
            local function keepExpiry()
              if last and ttl == -1 then
                redis.call('PEXPIRE', key, fmt(math.max(1, life())))
                repaired = 1
              end
            end
            if op == 'f' then
              local m = redis.call('ZRANGEBYSCORE', key, fmt(maxWait), fmt(maxWait), 'LIMIT', 0, 1)
              if m[1] and redis.call('ZREM', key, m[1]) == size then ttl = -2 end
              keepExpiry()
              return {0, repaired}
            end
            local U = {}
            local at = now
            for i = 1, n do
              local calls
              if W[i] == longest and inLongest then calls = inLongest else calls = counted(W[i]) end
              U[i] = calls * cost
              if cost > N[i] then at = -1 end
              if at >= 0 and U[i] + cost > N[i] then
                -- The call that must leave the window first, counted from the latest (past any left garbage).
                local room = math.floor((N[i] - cost) / cost)
                local e = redis.call('ZREVRANGE', key, G + room, G + room, 'WITHSCORES')
                local t = tonumber(e[2]) + W[i]
                if t > at then at = t end
              end
            end
            if op == 'r' and at >= 0 and at < now + minWait then at = now + minWait end
            if last and last <= now - horizon then last = nil end
            local consumed = 0
            local receipt = 0
            if op == 'k' then
              -- A peek: whether the cost fits now, counting nothing.
              if at == now then consumed = 1 end
            elseif at >= 0 and (at == now or (op == 'r' and at - now <= maxWait)) then
              redis.call('ZADD', key, fmt(at), member)
              if ttl == -2 then ttl = -1 end
              consumed = 1
              receipt = at
              if last == nil or at > last then last = at end
              if pttl < 0 or life() > pttl then
                ttl = life()
                redis.call('PEXPIRE', key, fmt(ttl))
              end
              -- Every count is of the entries later than now - W, a call logged for later included.
              for i = 1, n do U[i] = U[i] + cost end
            end
            keepExpiry()
            local wait = -1
            if at >= 0 then wait = at - now end
            local out = {consumed, wait, receipt, repaired}
            for i = 1, n do
              local rem = N[i] - U[i]
              if rem < 0 then rem = 0 end
              local reset = 0
              if last and last > now - W[i] then reset = last + W[i] - now end
              out[#out + 1] = rem
              out[#out + 1] = reset
            end
            return out
            """.formatted(LOG_TRIM_PER_CALL, Limit.MAX_PERIOD_DAYS * 86_400_000_000L, Rule.MAX_LOG_CALLS);

    /**
     * The counters: a hash with a field {@code <period>:<interval>} per window and interval. Every field is checked
     * against its own period, whichever instance's window it is: one whose interval no longer counts (before the
     * previous one) is dropped, one dated beyond the longest delay, with a count that is not a positive integer, or
     * a name that is not canonical is garbage, replaced, and so is a count more than any limit and its debt make
     * ({@code MOST}; not judged by this rule's own limit, which may have been lowered at run time while the key held
     * more). Fields of periods this caller's rule does not have are otherwise left (another instance may use them: a
     * rolling deploy, other per-key limits).
     *
     * <p>A charge ({@code c}) adds to the count of the interval the call was counted in (its receipt), or of the open
     * one when that counts no more, as far as no count goes more than its window's debt bound past the limit: a count
     * above the limit weighs as any count, so the window's next calls wait until its weighted count leaves them room.
     *
     * <p>One script run performs a run of operations on the key ({@link KeyQueue}: the operations of this JVM that came
     * while one was on its way, or one alone), in order, each exactly as it would alone: the hash is read, checked and
     * parsed once per run, and each operation then works on the counts in memory, writing what it changes to Redis as
     * it goes, so a crowd on one key costs Redis about one parse per run. Arguments: the number of operations, then for
     * each the number of its arguments and the common arguments of the class documentation (every operation of a run
     * has the same windows: one key, one rule's limits). Reply: each operation's reply, a repair reported once, by the
     * first.
     *
     * <p>Worst case per run: one {@code HGETALL} of at most {@value #COUNTER_HARD_FIELDS} entries (two instances'
     * windows at their most: {@link Rule#MAX_COUNTER_DELAY_INTERVALS} plus three per window, for
     * {@link Rule#MAX_LIMITS} windows, each); then per operation a sort of this rule's entries per window when one was
     * added, and one pass over them to find the earliest time a call fits (each step either passes an entry or moves
     * one interval past it), so O(F log F) for F entries per operation, whatever the number of waiters or their
     * intervals' spread, for at most {@link RedisSlidingState#MAX_COMBINED} operations; measured in
     * {@code docs/RELIABILITY.md}.
     */
    static final String COUNTER_RUN = LuaScript.RUNS + """
            local key = KEYS[1]
            local count = #ops
            local TIME = nil
            local function nowOf(a)
              if a[1] ~= '' then return tonumber(a[1]) end
              if not TIME then
                local t = redis.call('TIME')
                TIME = tonumber(t[1]) * 1000000 + tonumber(t[2])
              end
              return TIME
            end
            local A = ops[1]
            local now = nowOf(A)
            local keep = tonumber(A[6])
            """ + windowsOf("A")
            + """
            local AHEAD = %d
            local repaired = 0
            local function fmt(x) return string.format('%%d', x) end
            """.formatted(AHEAD_MICROS)
            + sizeOrReplace("HLEN", COUNTER_HARD_FIELDS)
            + DEBT_BOUND
            + """
            -- An absent key is not read, and has no expiry to keep: the calls make it.
            local existed = size > 0
            local MAXF = %d + 3 * n
            local c, K, D = {}, {}, {}
            local byPeriod = {}
            for i = 1, n do
              c[i] = {}
              K[i] = {}
              D[i] = debtBound(W[i], N[i])
              byPeriod[P[i]] = i
            end
            local fields = {}
            if existed then fields = redis.call('HGETALL', key) end
            local held = #fields / 2
            local own = 0
            local function drop(f)
              redis.call('HDEL', key, f)
              held = held - 1
            end
            for j = 1, #fields, 2 do
              local f = fields[j]
              local p, k = string.match(f, '^([1-9]%%d*):(%%-?%%d+)$')
              local period = p and #p <= 16 and tonumber(p)
              local idx = period and tonumber(k)
              local raw = fields[j + 1]
              -- A count HINCRBY can add to: digits only, no sign, no exponent, within what a limit and its debt make.
              local v = string.match(raw, '^[1-9]%%d*$') and #raw <= 17 and tonumber(raw)
              local i = byPeriod[p]
              -- A count is garbage past what any limit and its debt could make, not past this rule's own: a limit
              -- lowered at run time (a plan, a rule change) must keep the key's usage, however far above it.
              local most = MOST
              if not idx or fmt(idx) ~= k then
                drop(f)
                repaired = 1
              elseif idx < math.floor(now / period) - 1 then
                drop(f)
              elseif idx > math.floor((now + AHEAD) / period) or not v or v > most then
                drop(f)
                repaired = 1
              elseif i then
                c[i][idx] = v
                K[i][#K[i] + 1] = idx
                own = own + 1
              end
            end
            local sorted = {}
            local function lastCounted(i)
              local m = nil
              for idx in pairs(c[i]) do
                if m == nil or idx > m then m = idx end
              end
              return m
            end
            -- How long, from t, until the last interval counted in any window stops counting as the previous one.
            local function horizonAt(t)
              local horizon = 0
              for i = 1, n do
                local last = lastCounted(i)
                if last then
                  local u = (last + 2) * W[i] - t
                  if u > horizon then horizon = u end
                end
              end
              return horizon
            end
            local function load(i, t)
              local k = math.floor(t / W[i])
              local s = 0
              for idx, v in pairs(c[i]) do
                if idx >= k then s = s + v end
              end
              return s + (c[i][k - 1] or 0) * ((W[i] - (t - k * W[i])) / W[i])
            end
            -- The earliest time a call of cost fits window i at now: one pass over its intervals in order, with the
            -- sum of the counts from the pointer on (what is counted in an interval includes every later reservation).
            local function earliest(i, cost, now)
              if cost > N[i] then return -1 end
              local ks, ci, Wi, Ni = K[i], c[i], W[i], N[i]
              if not sorted[i] then
                table.sort(ks)
                sorted[i] = true
              end
              local m = #ks
              local suffix = {}
              local s = 0
              for q = m, 1, -1 do
                s = s + (ci[ks[q]] or 0)
                suffix[q] = s
              end
              local k = math.floor(now / Wi)
              local q = 1
              while q <= m and ks[q] < k do q = q + 1 end
              while true do
                local later = suffix[q] or 0
                if later + cost <= Ni then
                  local prev = ci[k - 1] or 0
                  local start = k * Wi
                  if prev == 0 then return math.max(now, start) end
                  local room = Ni - cost - later
                  local off = math.ceil((prev - room) * Wi / prev)
                  if off < Wi then return math.max(now, start + off) end
                  k = k + 1
                else
                  k = ks[q] + 1
                end
                while q <= m and ks[q] < k do q = q + 1 end
              end
            end
            local function add(i, k, delta)
              if not c[i][k] then
                K[i][#K[i] + 1] = k
                sorted[i] = false
                own = own + 1
                held = held + 1
              end
              c[i][k] = (c[i][k] or 0) + delta
            end
            local counted = false
            local horizonAfter = 0
            local out = {}
            for r = 1, count do
              local a = ops[r]
              local now = nowOf(a)
              local cost = tonumber(a[2])
              local op = a[3]
              local maxWait = tonumber(a[4])
              local minWait = tonumber(a[8 + 2 * n]) or 0
              local rep = 0
              if r == 1 then rep = repaired end
              if op == 'c' then
                -- A charge: the tokens a call used beyond its estimate, counted in the interval the call was counted
                -- in (its receipt, in maxWait's place) or, when that counts no more, the open one; no count goes
                -- more than its window's debt bound past the limit. Reply: {0, repaired, taken}.
                local taken = cost
                local T = {}
                for i = 1, n do
                  local k = math.floor(maxWait / W[i])
                  if k < math.floor(now / W[i]) - 1 then k = math.floor(now / W[i]) end
                  T[i] = k
                  local room = N[i] + D[i] - (c[i][k] or 0)
                  if room < taken then taken = room end
                end
                if taken < 0 then taken = 0 end
                if taken > 0 then
                  for i = 1, n do
                    add(i, T[i], taken)
                    redis.call('HINCRBY', key, P[i] .. ':' .. fmt(T[i]), fmt(taken))
                  end
                  counted = true
                  local horizon = horizonAt(now)
                  if horizon > horizonAfter then horizonAfter = horizon end
                end
                out[r] = {0, rep, taken}
              elseif op == 'f' then
                for i = 1, n do
                  local k = math.floor(maxWait / W[i])
                  local v = c[i][k]
                  if v then
                    local field = P[i] .. ':' .. fmt(k)
                    if v <= cost then
                      redis.call('HDEL', key, field)
                      c[i][k] = nil
                      held = held - 1
                      own = own - 1
                      for q = #K[i], 1, -1 do
                        if K[i][q] == k then table.remove(K[i], q) break end
                      end
                    else
                      redis.call('HINCRBY', key, field, -cost)
                      c[i][k] = v - cost
                    end
                  end
                end
                out[r] = {0, rep}
              else
                local at = now
                for i = 1, n do
                  local e = earliest(i, cost, now)
                  if e < 0 then at = -1 break end
                  if e > at then at = e end
                end
                if op == 'r' and at >= 0 and at < now + minWait then at = now + minWait end
                local consumed = 0
                local receipt = 0
                local fits = at >= 0 and (at == now or (op == 'r' and at - now <= maxWait))
                -- A peek: whether the cost fits now, counting nothing.
                local fitsNow = fits and at == now
                if op == 'k' then fits = false end
                if fits and at > now then
                  -- A reservation takes at most one entry per window; this rule's entries stay within so many.
                  local needed = 0
                  for i = 1, n do
                    if not c[i][math.floor(at / W[i])] then needed = needed + 1 end
                  end
                  if own + needed > MAXF then fits = false end
                end
                if fits then
                  for i = 1, n do
                    local k = math.floor(at / W[i])
                    add(i, k, cost)
                    redis.call('HINCRBY', key, P[i] .. ':' .. fmt(k), cost)
                  end
                  consumed = 1
                  receipt = at
                  counted = true
                end
                local horizon = horizonAt(now)
                if consumed == 1 and horizon > horizonAfter then horizonAfter = horizon end
                if op == 'k' and fitsNow then consumed = 1 end
                local wait = -1
                if at >= 0 then wait = at - now end
                local reply = {consumed, wait, receipt, rep}
                for i = 1, n do
                  local rem = math.floor(N[i] - load(i, now) + 1e-9)
                  if rem < 0 then rem = 0 end
                  local last = lastCounted(i)
                  local reset = 0
                  if last then reset = math.max(0, (last + 2) * W[i] - now) end
                  reply[#reply + 1] = rem
                  reply[#reply + 1] = reset
                end
                out[r] = reply
              end
            end
            -- Never shortens the key's life: another instance may count by a longer window.
            if counted then
              local ms = math.ceil(horizonAfter / 1000) + keep
              if not existed or ms > redis.call('PTTL', key) then redis.call('PEXPIRE', key, fmt(ms)) end
            elseif held > 0 and redis.call('PTTL', key) == -1 then
              -- Every path that leaves the key keeps an expiry: one without is given one.
              local horizon = horizonAt(now)
              redis.call('PEXPIRE', key, fmt(math.max(math.ceil(horizon / 1000), math.ceil(2 * longest / 1000)) + keep))
              -- A repair, reported by the first operation's reply: {consumed, wait, receipt, repaired, ...} (at least
              -- six values), or {0, repaired} and {0, repaired, taken}.
              if #out[1] > 3 then out[1][4] = 1 else out[1][2] = 1 end
            end
            return out
            """.formatted(Rule.MAX_COUNTER_DELAY_INTERVALS);

    /**
     * Lua: {@code size}, the number of entries of the key read by {@code command} (ZCARD, HLEN), 0 when it does not
     * exist. Garbage is replaced, not obeyed: a key of another type (the command's WRONGTYPE error, in the same
     * command) or with more than {@code most} entries is deleted, and reads as absent ({@code repaired} set).
     */
    static String sizeOrReplace(String command, long most) {
        return """
                local size = redis.pcall('%s', key)
                if type(size) == 'table' then
                  -- Only a key of another type makes the count fail; anything else fails the script, as redis.call would.
                  if not string.find(size.err or '', 'WRONGTYPE', 1, true) then error(size) end
                  size = -1
                end
                if size < 0 or size > %d then
                  redis.call('UNLINK', key)
                  repaired = 1
                  size = 0
                end
                """.formatted(command, most);
    }

    /**
     * Lua: the windows of a call's arguments {@code args} (ARGV, or one operation's of a run): {@code n}, then per
     * window {@code P} its period as sent, {@code W} the period in microseconds and {@code N} its limit, and
     * {@code longest}, the longest period.
     */
    private static String windowsOf(String args) {
        return """
                local n = tonumber(%1$s[7])
                local W, N, P = {}, {}, {}
                local longest = 0
                for i = 1, n do
                  P[i] = %1$s[6 + 2 * i]
                  W[i] = tonumber(P[i])
                  N[i] = tonumber(%1$s[7 + 2 * i])
                  if W[i] > longest then longest = W[i] end
                end
                """.formatted(args);
    }

    private SlidingScripts() {}
}
