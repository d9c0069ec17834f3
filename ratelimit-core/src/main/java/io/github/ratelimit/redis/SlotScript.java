package io.github.ratelimit.redis;

/**
 * The script of a concurrency rule's slots in Redis: a sorted set of leases, member the lease's id (a decimal number
 * unique per call), score the time it expires, in microseconds on the server's clock (or the store's, when it was
 * given one). A lease lives {@code lease} microseconds from when it was taken or last renewed; an instance renews its
 * calls' leases while they run, so only a crashed (or partitioned) instance's leases run out, and their slots come
 * back then.
 *
 * <p>Arguments: ARGV[1] the time in microseconds since the epoch, or '' for the server's {@code TIME}; ARGV[2] the
 * operation: {@code a} takes a slot for lease ARGV[3] if fewer than ARGV[4] leases are live, {@code k} says whether it
 * would (a peek), {@code f} gives lease ARGV[3] back, {@code n} renews lease ARGV[3] if it is still there (never one
 * that ran out: its slot may be another call's now); ARGV[5] the lease's life in microseconds.
 *
 * <p>Reply: {@code {done, live leases after, repaired}}.
 *
 * <p>Worst case per call: a constant number of commands, and the removal of at most {@code 2 × max + 64} members.
 * What the script reads it validates: a key of another type, or with more leases than that (a limit lowered by more
 * than half while calls were in flight, or garbage), is replaced; leases that ran out go, and so do those that expire
 * later than twice a lease's life from now, which no instance writes (a far-future score would hold a slot forever).
 */
final class SlotScript {

    private SlotScript() {}

    static final String SOURCE = SlidingScripts.KEY_AND_NOW + """
            local op = ARGV[2]
            local member = ARGV[3]
            local max = tonumber(ARGV[4])
            local lease = tonumber(ARGV[5])
            local function fmt(x) return string.format('%d', x) end
            local repaired = 0
            local t = redis.call('TYPE', key).ok
            if t ~= 'none' and (t ~= 'zset' or redis.call('ZCARD', key) > 2 * max + 64) then
              redis.call('UNLINK', key)
              repaired = 1
            end
            redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now))
            if redis.call('ZREMRANGEBYSCORE', key, '(' .. fmt(now + 2 * lease), '+inf') > 0 then repaired = 1 end
            local n = redis.call('ZCARD', key)
            local function keep()
              redis.call('PEXPIRE', key, fmt(math.ceil(2 * lease / 1000)))
            end
            if op == 'a' then
              if n < max then
                redis.call('ZADD', key, fmt(now + lease), member)
                keep()
                return {1, n + 1, repaired}
              end
              return {0, n, repaired}
            elseif op == 'k' then
              if n < max then return {1, n, repaired} end
              return {0, n, repaired}
            elseif op == 'f' then
              local gone = redis.call('ZREM', key, member)
              return {gone, n - gone, repaired}
            elseif op == 'n' then
              if redis.call('ZSCORE', key, member) then
                redis.call('ZADD', key, 'XX', fmt(now + lease), member)
                keep()
                return {1, n, repaired}
              end
              return {0, n, repaired}
            end
            return redis.error_reply('unknown operation ' .. tostring(op))
            """;
}
