package io.github.ratelimit.redis;

/**
 * The Lua scripts of the per-key limit store ({@link LimitAnswers}): a change, written whole or not at all, and the
 * replacement of a stream of changes that cannot serve. Stateless.
 *
 * <p>A stream cannot serve when its key holds another type, or when its last ID has a part of 2^63 or more (someone
 * added an entry by hand, e.g. {@code 18446744073709551615-0}): clients read IDs as signed 64-bit numbers, so every
 * refresh that meets one fails, and once the last ID is {@code 18446744073709551615-18446744073709551615} every
 * {@code XADD *} fails too. The scripts check the last ID the stream generated ({@code XINFO STREAM}), not only its
 * newest entry, which may have been deleted since. Such a stream is replaced by one that starts with a
 * {@code repair} entry, telling every instance to forget its answers.
 */
final class LimitScripts {

    /** {@code unusable_stream(key)}: whether the key holds something other than a stream whose IDs clients read. */
    private static final String UNUSABLE_STREAM = """
            local function too_big(n)
              return #n > 19 or (#n == 19 and n > '9223372036854775807')
            end
            local function unusable_stream(key)
              local t = redis.call('TYPE', key).ok
              if t == 'none' then
                return false
              end
              if t ~= 'stream' then
                return true
              end
              local info = redis.call('XINFO', 'STREAM', key)
              for i = 1, #info, 2 do
                if info[i] == 'last-generated-id' then
                  local ms, seq = string.match(info[i + 1], '^(%d+)-(%d+)$')
                  return ms == nil or too_big(ms) or too_big(seq)
                end
              end
              return false
            end
            """;

    /**
     * KEYS[1] the stream; ARGV[1] max changes, ARGV[2] a random token. Replaces a stream that cannot serve by one
     * holding a repair entry.
     */
    static final String REPAIR_STREAM_SOURCE = UNUSABLE_STREAM + """
            if not unusable_stream(KEYS[1]) then
              return 0
            end
            redis.call('UNLINK', KEYS[1])
            redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'op', 'repair', 'n', ARGV[2])
            return 1
            """;

    /**
     * KEYS[1] the rule's hash (or the hash of changed rules), KEYS[2] the stream; ARGV: op (set|del), key (or the
     * rule's name), value, rule, actor, max changes, a random token (each entry carries one, so a reader tells a
     * replaced stream's entry from the one it read at the same ID, even within one millisecond), the op the stream
     * records ({@code set} or {@code del} for a key, {@code rule} for a rule's own limits or mode). Checks
     * both keys before writing: a key of another type, or a stream that cannot serve, is replaced (a {@code repair}
     * entry in the stream tells every instance to forget its answers), so no write can fail after another has
     * happened.
     */
    static final String CHANGE_SOURCE = UNUSABLE_STREAM + """
            local repaired = 0
            local t = redis.call('TYPE', KEYS[1]).ok
            if t ~= 'hash' and t ~= 'none' then
              redis.call('UNLINK', KEYS[1])
              repaired = repaired + 1
            end
            if unusable_stream(KEYS[2]) then
              redis.call('UNLINK', KEYS[2])
              repaired = repaired + 1
            end
            if repaired > 0 then
              redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'op', 'repair', 'rule', ARGV[4], 'by', ARGV[5],
                'n', ARGV[7])
            end
            local changed
            if ARGV[1] == 'set' then
              redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
              changed = 1
            else
              changed = redis.call('HDEL', KEYS[1], ARGV[2])
            end
            if changed == 1 then
              redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'rule', ARGV[4], 'key', ARGV[2],
                'op', ARGV[8], 'by', ARGV[5], 'n', ARGV[7])
            end
            return {changed, repaired}
            """;

    private LimitScripts() {}
}
