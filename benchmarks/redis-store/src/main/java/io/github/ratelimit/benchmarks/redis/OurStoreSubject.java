package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.BucketStore;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Our limiter with its Redis store, as an application uses it: {@code Guard.acquire} with a rule keyed by a
 * header, so each call resolves its key, finds the rule's bucket and decides (key, rule, decide). The store has its
 * default settings (batching and auto-pipelining on, 50 ms command timeout, circuit breaker, fail-open) except for the key prefix, a pool
 * at least as large as the number of threads and, if {@code --our-timeout} is given, the command timeout.
 *
 * <p>One subject per algorithm of the rule: {@link Algorithm#TOKEN_BUCKET} ({@code ours}, a compare-and-set script
 * with batching), {@link Algorithm#FIXED_WINDOW} ({@code ours-fixed}, the same script and batching on a bucket that
 * refills at the window's clock-aligned boundaries), {@link Algorithm#SLIDING_WINDOW_LOG} ({@code ours-log}, a sorted
 * set per key) and {@link Algorithm#SLIDING_WINDOW_COUNTER} ({@code ours-counter}, a hash per key), the sliding ones
 * one script per decision that reads the server's {@code TIME} itself.
 */
final class OurStoreSubject implements Subject {

    private static final String KEY_HEADER = "X-Bench-Key";

    /**
     * The commands the sliding scripts run (SlidingScripts in ratelimit-core): TIME (unless the store has a clock
     * of its own, which this benchmark never gives it), TYPE and the size of the key (ZCARD or HLEN) that check it,
     * UNLINK for garbage, the sorted-set or hash commands, and PEXPIRE. None of them is a GET or SET.
     */
    private static final Set<String> SLIDING_SCRIPT_COMMANDS = Set.of(
            "time",
            "type",
            "zcard",
            "hlen",
            "unlink",
            "zremrangebyscore",
            "zremrangebyrank",
            "zcount",
            "zrangebyscore",
            "zrevrangebyscore",
            "zrevrange",
            "zadd",
            "zrem",
            "hgetall",
            "hdel",
            "hincrby",
            "pttl",
            "pexpire");

    private final Algorithm algorithm;
    private final boolean autoPipelining;
    private final String url;
    private final String keyPrefix;
    private final int poolSize;
    private final Duration commandTimeout;

    /**
     * @param algorithm the algorithm of the rules this subject decides with
     * @param autoPipelining whether the store pipelines concurrent threads' scripts (its default)
     * @param commandTimeout the store's command timeout, or {@code null} for its default
     */
    OurStoreSubject(
            Algorithm algorithm,
            boolean autoPipelining,
            String url,
            String keyPrefix,
            int poolSize,
            Duration commandTimeout) {
        this.algorithm = algorithm;
        this.autoPipelining = autoPipelining;
        this.url = url;
        this.keyPrefix = keyPrefix;
        this.poolSize = poolSize;
        this.commandTimeout = commandTimeout;
    }

    /**
     * @return the subject's id for an algorithm: {@code ours}, {@code ours-fixed}, {@code ours-log},
     *         {@code ours-counter}
     */
    static String id(Algorithm algorithm) {
        return switch (algorithm) {
            case TOKEN_BUCKET -> Options.OURS;
            case FIXED_WINDOW -> Options.OURS_FIXED;
            case SLIDING_WINDOW_LOG -> Options.OURS_LOG;
            case SLIDING_WINDOW_COUNTER -> Options.OURS_COUNTER;
            default -> "ours-" + algorithm.name().toLowerCase(Locale.ROOT);
        };
    }

    @Override
    public String id() {
        return autoPipelining ? id(algorithm) : id(algorithm).replace(Options.OURS, Options.OURS_DIRECT);
    }

    @Override
    public String label() {
        return switch (algorithm) {
            case TOKEN_BUCKET -> autoPipelining ? "Ours (JedisBucketStore)" : "Ours, auto-pipelining off";
            case FIXED_WINDOW -> "Ours, fixed window";
            case SLIDING_WINDOW_LOG -> "Ours, sliding window log";
            case SLIDING_WINDOW_COUNTER -> "Ours, sliding window counter";
            default -> "Ours, " + algorithm;
        };
    }

    @Override
    public boolean pipelines() {
        return autoPipelining;
    }

    /** @return whether the rule is a sliding window (one script per decision, no batching) */
    boolean sliding() {
        return algorithm.isSliding();
    }

    @Override
    public List<Limit> throughputLimits() {
        return algorithm == Algorithm.SLIDING_WINDOW_LOG
                ? Workloads.LOG_THROUGHPUT_LIMITS
                : Workloads.THROUGHPUT_LIMITS;
    }

    @Override
    public Session open() {
        JedisBucketStore.Builder builder = JedisBucketStore.builder()
                .url(url)
                .keyPrefix(keyPrefix)
                .poolSize(poolSize)
                .autoPipelining(autoPipelining);
        if (commandTimeout != null) {
            builder.commandTimeout(commandTimeout);
        }
        JedisBucketStore store = builder.build();
        return new OurSession(
                algorithm, store, RateLimiter.builder().store(store).build());
    }

    /**
     * The client sends only EVALSHA (and EVAL after a NOSCRIPT); commandstats also counts what the scripts run, so
     * that is subtracted per algorithm.
     *
     * <p>Token bucket: the compare-and-swap script reads the key with one GETRANGE and writes at most one SET; the
     * clock script (every 10 s) runs one TIME, and nothing else runs TIME, so compare-and-swap runs are the scripts
     * that succeeded less the TIMEs. Every GET was sent by the client itself (none are expected).
     *
     * <p>Sliding log and counter: every decision's script runs TIME too, so the token bucket's formula does not
     * apply (its "compare-and-swap runs" would come out as zero, or below zero when a script fails after its TIME).
     * Those scripts and the clock script run no GET or SET, so every GET and SET was sent by the client (none are
     * expected), and the round trips are EVALSHA + EVAL + GET + SET. {@link #accountingProblem} checks that every
     * script that succeeded ran at least one TIME (a run of several operations of one key runs one per operation).
     */
    @Override
    public long roundTrips(ServerCounters.Delta d) {
        if (algorithm.isSliding()) {
            return d.calls("evalsha") + d.calls("eval") + d.calls("get") + d.calls("set");
        }
        return d.calls("evalsha") + d.calls("eval") + d.calls("get");
    }

    @Override
    public String accountingProblem(ServerCounters.Delta d) {
        long scripts = d.succeeded("evalsha") + d.succeeded("eval");
        if (algorithm.isSliding()) {
            long problems = 0;
            StringBuilder why = new StringBuilder();
            if (d.calls("time") < scripts) {
                why.append(d.calls("time"))
                        .append(" TIME calls for ")
                        .append(scripts)
                        .append(" scripts that succeeded (each runs at least one)");
                problems++;
            }
            if (d.calls("get") + d.calls("set") > 0) {
                why.append(problems++ > 0 ? "; " : "")
                        .append(d.calls("get"))
                        .append(" GET and ")
                        .append(d.calls("set"))
                        .append(" SET, which no sliding script runs");
            }
            long failed = d.failed("evalsha") + d.failed("eval");
            if (failed > 0) {
                why.append(problems++ > 0 ? "; " : "")
                        .append(failed)
                        .append(" EVALSHA/EVAL failed (NOSCRIPT, or a " + "script error)");
            }
            long other = d.calls(name -> !SLIDING_SCRIPT_COMMANDS.contains(name)
                    && !name.equals("evalsha")
                    && !name.equals("eval")
                    && !PhaseRunner.isHousekeeping(name));
            if (other > 0) {
                why.append(problems++ > 0 ? "; " : "")
                        .append(other)
                        .append(" calls of commands the sliding scripts " + "do not run");
            }
            return problems == 0 ? null : why.toString();
        }
        long casRuns = scripts - d.calls("time");
        if (d.calls("getrange") < casRuns) {
            return d.calls("getrange") + " GETRANGE calls for " + casRuns
                    + " compare-and-swap runs (each runs one GETRANGE)";
        }
        return null;
    }

    @Override
    public long retries(ServerCounters.Delta delta, StoreCounters store) {
        return store == null ? -1 : store.conflicts();
    }

    @Override
    public String retriesSource() {
        return algorithm.isSliding()
                ? "the store's own conflict counter (`stats().conflicts`); 0 by construction, each decision being one "
                        + "atomic script with nothing to compare"
                : "the store's own conflict counter (`stats().conflicts`)";
    }

    private record OurSession(Algorithm algorithm, JedisBucketStore store, RateLimiter limiter) implements Session {

        @Override
        public Decider prepare(String keySpace, List<String> keys, List<Limit> limits) {
            Guard guard = limiter.guard(Rule.builder(keySpace)
                    .key("header:" + KEY_HEADER)
                    .algorithm(algorithm)
                    .limits(limits)
                    .build());
            RequestContext[] contexts = new RequestContext[keys.size()];
            for (int i = 0; i < contexts.length; i++) {
                contexts[i] =
                        RequestContext.builder().header(KEY_HEADER, keys.get(i)).build();
            }
            return keyIndex -> outcome(guard.acquire(contexts[keyIndex]));
        }

        private static int outcome(Decision decision) {
            if (decision.verdicts().get(0).basis() != Basis.BUCKET) {
                return Decider.STORE_FAILED;
            }
            return decision.permitted() ? Decider.ALLOWED : Decider.REJECTED;
        }

        /** The Redis key of a rule's key, as the store lays it out for the subject's algorithm. */
        @Override
        public byte[] redisKey(String keySpace, String key) {
            return store.redisKey(new BucketStore.Key(keySpace, key), algorithm);
        }

        @Override
        public StoreCounters counters() {
            JedisBucketStore.Stats s = store.stats();
            return new StoreCounters(s.roundTrips(), s.conflicts(), s.failures(), s.shortCircuited());
        }

        @Override
        public void close() {
            limiter.close(); // closes the store and its connections
        }
    }
}
