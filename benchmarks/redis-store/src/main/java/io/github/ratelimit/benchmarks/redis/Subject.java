package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Limit;
import java.util.List;

/**
 * Something that decides rate-limited calls with buckets in Redis: our store, or a peer.
 */
interface Subject {

    /** @return the short name used on the command line, e.g. {@code ours} */
    String id();

    /** @return the name in the report */
    String label();

    /**
     * @return whether the subject sends several commands per write (so Redis writes fewer replies than it
     *         answers commands)
     */
    default boolean pipelines() {
        return false;
    }

    /**
     * @return the windows of the throughput phases: so large that nothing is rejected, so the store is measured
     */
    default List<Limit> throughputLimits() {
        return Workloads.THROUGHPUT_LIMITS;
    }

    /**
     * @return a fresh client: new connections and no state remembered from earlier sessions, so a measured phase
     *         never benefits from caches filled by another
     */
    Session open();

    /**
     * Counts the commands clients sent in a window, from {@code commandstats}. Commandstats also counts the commands
     * a script runs, so each subject subtracts those of its own scripts; {@link ServerCounters.Delta#replies()}
     * cross-checks the result without relying on that knowledge.
     *
     * @param delta the server's counters over the window
     * @return round trips: one per command sent, except for a subject that sends a decision's commands as one
     *         pipeline, which counts one per pipeline (see {@link #clientCommands})
     */
    long roundTrips(ServerCounters.Delta delta);

    /**
     * Counts the commands clients sent in a window, from {@code commandstats}, less those run inside the subject's
     * scripts. The same as {@link #roundTrips} unless one round trip carries several commands of one decision.
     *
     * @param delta the server's counters over the window
     * @return commands sent
     */
    default long clientCommands(ServerCounters.Delta delta) {
        return roundTrips(delta);
    }

    /**
     * @return whether the memory probe measures the subject: only where a bucket is one Redis key that lives as long
     *         as the probe needs
     */
    default boolean memoryProbe() {
        return true;
    }

    /**
     * Checks the assumptions {@link #roundTrips} rests on against the counters of a window, where the subject's
     * scripts allow it.
     *
     * @param delta the server's counters over the window
     * @return what did not add up, or {@code null} when everything did (or nothing can be checked)
     */
    default String accountingProblem(ServerCounters.Delta delta) {
        return null;
    }

    /**
     * @param delta the server's counters over the window
     * @param store the subject's own counters over the window, or {@code null} when it keeps none
     * @return compare-and-swap attempts that found the state changed, or -1 when unknown
     */
    long retries(ServerCounters.Delta delta, StoreCounters store);

    /** @return how {@link #retries} is measured, for the report */
    String retriesSource();

    /** A connected client of a subject. */
    interface Session extends AutoCloseable {

        /**
         * Prepares the calls of one key space without touching Redis.
         *
         * @param keySpace a name never used before in this run; part of every Redis key, so the keys are fresh
         * @param keys the keys, addressed by index
         * @param limits the bucket's windows
         * @return the decider
         */
        Decider prepare(String keySpace, List<String> keys, List<Limit> limits);

        /** @return the Redis key a bucket of {@link #prepare} lives under */
        byte[] redisKey(String keySpace, String key);

        /** @return the subject's own counters now, or {@code null} when it keeps none */
        StoreCounters counters();

        @Override
        void close();
    }

    /**
     * Counters a store keeps about itself.
     *
     * @param roundTrips scripts it ran
     * @param conflicts attempts whose expected state was stale
     * @param failures operations that failed in Redis or on the network (timeouts included)
     * @param shortCircuited operations refused at once by the store's open circuit breaker
     */
    record StoreCounters(long roundTrips, long conflicts, long failures, long shortCircuited) {

        StoreCounters since(StoreCounters before) {
            return new StoreCounters(
                    roundTrips - before.roundTrips,
                    conflicts - before.conflicts,
                    failures - before.failures,
                    shortCircuited - before.shortCircuited);
        }
    }
}
