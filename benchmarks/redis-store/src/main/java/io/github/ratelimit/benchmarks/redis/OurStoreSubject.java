package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Basis;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketKey;
import io.github.ratelimit.store.JedisBucketStore;

import java.time.Duration;
import java.util.List;

/**
 * Our limiter with its Redis store, as an application uses it: {@code Guard.acquire} with a rule keyed by a
 * header, so each call resolves its key, finds the rule's bucket and decides (key, rule, decide). The store has its
 * default settings (batching on, 50 ms command timeout, circuit breaker, fail-open) except for the key prefix, a pool
 * at least as large as the number of threads and, if {@code --our-timeout} is given, the command timeout.
 */
final class OurStoreSubject implements Subject {

    private static final String KEY_HEADER = "X-Bench-Key";

    private final String url;
    private final String keyPrefix;
    private final int poolSize;
    private final Duration commandTimeout;

    /**
     * @param commandTimeout the store's command timeout, or {@code null} for its default
     */
    OurStoreSubject(String url, String keyPrefix, int poolSize, Duration commandTimeout) {
        this.url = url;
        this.keyPrefix = keyPrefix;
        this.poolSize = poolSize;
        this.commandTimeout = commandTimeout;
    }

    @Override
    public String id() {
        return Options.OURS;
    }

    @Override
    public String label() {
        return "Ours (JedisBucketStore)";
    }

    @Override
    public Session open() {
        JedisBucketStore.Builder builder = JedisBucketStore.builder().url(url).keyPrefix(keyPrefix).poolSize(poolSize);
        if (commandTimeout != null) {
            builder.commandTimeout(commandTimeout);
        }
        JedisBucketStore store = builder.build();
        return new OurSession(store, RateLimiter.builder().store(store).build());
    }

    /**
     * The client sends only EVALSHA (and EVAL after a NOSCRIPT). Its compare-and-swap script runs one GET and at
     * most one SET; its clock script runs one TIME. So GETs beyond one per compare-and-swap run were sent by the
     * client itself (none are expected), and SETs are all the script's.
     */
    @Override
    public long roundTrips(ServerCounters.Delta d) {
        long casRuns = d.succeeded("evalsha") + d.succeeded("eval") - d.calls("time");
        long clientGets = Math.max(0, d.calls("get") - casRuns);
        return d.calls("evalsha") + d.calls("eval") + clientGets;
    }

    @Override
    public long retries(ServerCounters.Delta delta, StoreCounters store) {
        return store == null ? -1 : store.conflicts();
    }

    @Override
    public String retriesSource() {
        return "the store's own conflict counter (`stats().conflicts`)";
    }

    private record OurSession(JedisBucketStore store, RateLimiter limiter) implements Session {

        @Override
        public Decider prepare(String keySpace, List<String> keys, List<Limit> limits) {
            Guard guard = limiter.guard(Rule.builder(keySpace).key("header:" + KEY_HEADER).limits(limits).build());
            RequestContext[] contexts = new RequestContext[keys.size()];
            for (int i = 0; i < contexts.length; i++) {
                contexts[i] = RequestContext.builder().header(KEY_HEADER, keys.get(i)).build();
            }
            return keyIndex -> outcome(guard.acquire(contexts[keyIndex]));
        }

        private static int outcome(Decision decision) {
            if (decision.verdicts().get(0).basis() != Basis.BUCKET) {
                return Decider.STORE_FAILED;
            }
            return decision.permitted() ? Decider.ALLOWED : Decider.REJECTED;
        }

        @Override
        public byte[] redisKey(String keySpace, String key) {
            return store.redisKey(new BucketKey(keySpace, key));
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
