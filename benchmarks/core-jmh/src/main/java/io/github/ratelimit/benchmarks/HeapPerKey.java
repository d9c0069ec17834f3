package io.github.ratelimit.benchmarks;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.LocalBucketStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.util.Locale;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * G9: heap retained per tracked key of the local store, and the store's maximum enforced. Not a JMH benchmark:
 * it measures retained heap, not time.
 *
 * <ol>
 *   <li>A {@link LocalBucketStore} with {@code maximumKeys(1_000_000)}; 1,000,000 distinct client addresses each
 *       make one call under a two-window rule keyed {@code ip}. Used heap after full collections, before and
 *       after, divided by the entries held, is the heap per key: the store's map entry, the bucket key, the key
 *       string, the Bucket4j bucket and its state.
 *   <li>A store with {@code maximumKeys(100_000)} and the same 1,000,000 keys: entries after
 *       {@code cleanUp()} must be at most the maximum, the peak seen during the run is reported, and the heap
 *       retained must stay near 100,000 keys' worth.
 * </ol>
 *
 * Run with a fixed heap so collections are comparable:
 * {@code java -Xms2g -Xmx2g -cp benchmarks.jar io.github.ratelimit.benchmarks.HeapPerKey [keys=1000000]
 * [bounded-maximum=100000] [histogram-rows=20]}. The class histogram (taken after the measurement) shows where
 * the bytes per key go.
 * Exits with status 1 when a G9 goal is missed.
 */
public final class HeapPerKey {

    private static final long GOAL_BYTES_PER_KEY = 400;
    private static final String[] LIMITS = {"100/1s", "10000/1h"};
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private HeapPerKey() {}

    public static void main(String[] args) throws InterruptedException {
        int keys = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int bounded = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        int histogramRows = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        System.out.printf(
                Locale.ROOT,
                "JVM %s, max heap %,d MB, GC %s%n",
                System.getProperty("java.vm.version"),
                Runtime.getRuntime().maxMemory() >> 20,
                gcNames());
        System.out.printf(
                Locale.ROOT,
                "rule: key ip, limits %s and %s (two windows, one bucket per key)%n%n",
                LIMITS[0],
                LIMITS[1]);

        // Warm the code path with a throw-away store so class loading and JIT data are not counted per key.
        drive(LocalBucketStore.builder().maximumKeys(10_000).build(), 20_000, 0, "warm-up", 0);

        Run unbounded = drive(
                LocalBucketStore.builder().maximumKeys(keys).build(), keys, keys, "maximum = keys", histogramRows);
        double perKey = (double) unbounded.retained / unbounded.entries;
        boolean perKeyOk = perKey <= GOAL_BYTES_PER_KEY && unbounded.entries <= keys;
        System.out.printf(
                Locale.ROOT,
                "  => %.1f bytes per key (G9 goal <= %d): %s%n%n",
                perKey,
                GOAL_BYTES_PER_KEY,
                perKeyOk ? "meets" : "MISSES");

        Run capped = drive(
                LocalBucketStore.builder().maximumKeys(bounded).build(), keys, bounded, "maximum = " + bounded, 0);
        boolean cappedOk = capped.entries <= bounded;
        double expected = perKey * bounded;
        System.out.printf(
                Locale.ROOT,
                "  => entries %,d <= maximum %,d: %s; peak estimate seen while driving: %,d; "
                        + "retained %,d bytes = %.2f x (bytes per key x maximum)%n",
                capped.entries,
                bounded,
                cappedOk ? "yes" : "NO",
                capped.peak,
                capped.retained,
                capped.retained / expected);
        System.out.println();
        System.out.println(perKeyOk && cappedOk ? "G9: meets" : "G9: MISSES");
        System.exit(perKeyOk && cappedOk ? 0 : 1);
    }

    /** What one store held after a run. */
    private record Run(long entries, long peak, long retained) {}

    private static Run drive(LocalBucketStore store, int keys, int maximum, String label, int histogramRows)
            throws InterruptedException {
        RateLimiter limiter = RateLimiter.builder().store(store).build();
        Guard guard =
                limiter.guard(Rule.builder("heap").key("ip").limits(LIMITS).build());
        // One call first, so the rule's compiled state and one bucket's classes exist before the baseline.
        guard.acquire(RequestContext.builder().remoteAddress("192.0.2.1").build());
        store.cleanUp();
        long before = usedAfterGc();

        long peak = 0;
        long rejected = 0;
        long start = System.nanoTime();
        for (int i = 0; i < keys; i++) {
            Decision d = guard.acquire(
                    RequestContext.builder().remoteAddress(address(i)).build());
            if (!d.permitted()) {
                rejected++;
            }
            if ((i & 1023) == 0) {
                peak = Math.max(peak, store.size());
            }
        }
        long driveNanos = System.nanoTime() - start;
        store.cleanUp();
        peak = Math.max(peak, store.size());
        long after = usedAfterGc();
        store.cleanUp();
        long entries = store.size();
        long retained = after - before;
        if (maximum > 0) {
            System.out.printf(
                    Locale.ROOT,
                    "[%s] %,d distinct keys in %.1f s (%,d rejected); entries after cleanUp: "
                            + "%,d; used heap %,d -> %,d bytes: +%,d bytes%n",
                    label,
                    keys,
                    driveNanos / 1e9,
                    rejected,
                    entries,
                    before,
                    after,
                    retained);
        }
        if (histogramRows > 0) {
            System.out.println("  where it goes: live objects while the store is full (top " + histogramRows
                    + " classes by bytes; divide by the entries for bytes per key)");
            System.out.print(histogram(histogramRows));
        }
        Reference.reachabilityFence(guard);
        Reference.reachabilityFence(store);
        limiter.close();
        return new Run(entries, peak, retained);
    }

    /**
     * @return the first rows of the JVM's live-object class histogram (as {@code jcmd <pid> GC.class_histogram}),
     *         or a note when the platform does not offer it
     */
    private static String histogram(int rows) {
        try {
            Object text = ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "gcClassHistogram",
                            new Object[] {new String[0]},
                            new String[] {String[].class.getName()});
            String[] lines = text.toString().split("\n");
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < Math.min(lines.length, rows + 2); i++) {
                out.append("    ").append(lines[i]).append(System.lineSeparator());
            }
            return out.toString();
        } catch (JMException | RuntimeException e) {
            return "    (no class histogram: " + e + ")" + System.lineSeparator();
        }
    }

    /** @return heap in use after full collections, once it has settled */
    private static long usedAfterGc() throws InterruptedException {
        long previous = Long.MAX_VALUE;
        long used = 0;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(200);
            used = MEMORY.getHeapMemoryUsage().getUsed();
            if (i >= 2 && Math.abs(previous - used) < 64 * 1024) {
                break;
            }
            previous = used;
        }
        return used;
    }

    /** @return a distinct IPv4 literal for each i below 2^24: 10.x.y.z */
    private static String address(int i) {
        return "10." + ((i >>> 16) & 0xff) + "." + ((i >>> 8) & 0xff) + "." + (i & 0xff);
    }

    private static String gcNames() {
        StringBuilder names = new StringBuilder();
        for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            names.append(names.length() == 0 ? "" : ", ").append(gc.getName());
        }
        return names.toString();
    }
}
