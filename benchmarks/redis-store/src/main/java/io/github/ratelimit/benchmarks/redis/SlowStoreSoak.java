package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Guard;
import io.github.ratelimit.HttpStatuses;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.testing.redis.DelayingProxy;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Refunds against a slow store (issue 33, item 5): a rule that counts only 404s gives back the token of every other
 * response, while Redis answers later than the command timeout now and then. Redis sits behind a proxy that holds each
 * chunk a client sends for a random time: most for a few milliseconds, a few percent for 60 to {@code --slow-ms} ms
 * (a p99 near 75 ms against the 50 ms command timeout, as in the issue). Threads decide calls of many clients and
 * complete each with 200 (given back) or, one in ten, 404 (kept), for {@code --seconds}.
 *
 * <p>Then it checks every client's bucket against what its calls should have left. The limit does not refill within
 * the run (a fixed window, {@code 1000000/1d}), so a client's remaining tokens are its capacity less its 404s decided by the bucket,
 * less at most its consumes that failed unanswered (Redis may have run them: they took a token no refund gives back).
 * Below that range a refund was lost; above it one was given twice. Also prints the store's own counts: refunds made
 * late, lost, and sent unanswered.
 *
 * <p>Run: {@code java -cp benchmarks/redis-store/target/redis-store-benchmark.jar
 * io.github.ratelimit.benchmarks.redis.SlowStoreSoak [--seconds 180] [--threads 64] [--clients 2000]
 * [--slow-ms 150] [--slow-share 0.03]}
 */
public final class SlowStoreSoak {

    private static final long CAPACITY = 1_000_000;

    private SlowStoreSoak() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Logger.getLogger("").setLevel(Level.SEVERE);
        int seconds = intArg(args, "--seconds", 60);
        int threads = intArg(args, "--threads", 64);
        int clients = intArg(args, "--clients", 2000);
        int slowMillis = intArg(args, "--slow-ms", 150);
        double slowShare = Double.parseDouble(arg(args, "--slow-share", "0.03"));
        try (RedisTarget target = RedisTarget.start();
                DelayingProxy proxy = DelayingProxy.start(
                        target.hostAndPort().getHost(), target.hostAndPort().getPort(), Duration.ZERO);
                JedisBucketStore store = JedisBucketStore.builder()
                        .url("redis://" + target.hostAndPort().getHost() + ":" + proxy.port())
                        .keyPrefix("soak")
                        .build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            // A fixed window of a day: nothing comes back within the run (unless it crosses midnight UTC: checked).
            Guard guard = limiter.guard(Rule.builder("not-found")
                    .key("ip")
                    .limits(CAPACITY + "/1d")
                    .algorithm(Algorithm.FIXED_WINDOW)
                    .count(HttpStatuses.parse("404"))
                    .build());
            long day = LocalDate.now(ZoneOffset.UTC).toEpochDay();
            AtomicLongArray kept = new AtomicLongArray(clients);
            AtomicLongArray uncertain = new AtomicLongArray(clients);
            LongAdder calls = new LongAdder();
            LongAdder refunds = new LongAdder();
            LongAdder failOpen = new LongAdder();
            proxy.delays(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                return r.nextDouble() < slowShare
                        ? TimeUnit.MILLISECONDS.toNanos(60 + r.nextInt(slowMillis - 59))
                        : TimeUnit.MICROSECONDS.toNanos(r.nextInt(3_000));
            });
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            Thread[] workers = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                workers[t] = new Thread(
                        () -> {
                            ThreadLocalRandom r = ThreadLocalRandom.current();
                            while (System.nanoTime() < end) {
                                int client = r.nextInt(clients);
                                RequestContext context = RequestContext.builder()
                                        .remoteAddress(address(client))
                                        .build();
                                Decision d = guard.acquire(context);
                                calls.increment();
                                Basis basis = d.binding().basis();
                                if (basis != Basis.BUCKET) {
                                    // Failed: the consume may still have been run by Redis, its answer lost.
                                    failOpen.increment();
                                    uncertain.incrementAndGet(client);
                                    continue;
                                }
                                boolean notFound = r.nextInt(10) == 0;
                                if (notFound) {
                                    kept.incrementAndGet(client);
                                } else {
                                    refunds.increment();
                                }
                                guard.completed(d, false, notFound ? 404 : 200);
                            }
                        },
                        "soak-" + t);
                workers[t].start();
            }
            for (Thread w : workers) {
                w.join();
            }
            proxy.delay(Duration.ZERO);
            // Until the proxy holds nothing and the late refunds have been still for 3 s (they retry within 1 s).
            long drainStart = System.nanoTime();
            long settledSince = System.nanoTime();
            long lastLate = -1;
            while (System.nanoTime() - drainStart < 60_000_000_000L) {
                JedisBucketStore.Stats s = store.stats();
                long late = s.lateRefunds() + s.lostRefunds();
                if (proxy.held() > 0 || late != lastLate || s.breaker() != JedisBucketStore.BreakerState.CLOSED) {
                    lastLate = late;
                    settledSince = System.nanoTime();
                } else if (System.nanoTime() - settledSince > 3_000_000_000L) {
                    break;
                }
                Thread.sleep(100);
            }
            if (LocalDate.now(ZoneOffset.UTC).toEpochDay() != day) {
                throw new IllegalStateException(
                        "the run crossed midnight UTC, when every window was refilled: run again");
            }
            JedisBucketStore.Stats stats = store.stats();
            long lostKeys = 0;
            long lostTokens = 0;
            long twiceKeys = 0;
            long twiceTokens = 0;
            for (int c = 0; c < clients; c++) {
                long remaining = remaining(guard, c);
                long most = CAPACITY - kept.get(c);
                long least = most - uncertain.get(c);
                if (remaining < least) {
                    lostKeys++;
                    lostTokens += least - remaining;
                } else if (remaining > most) {
                    twiceKeys++;
                    twiceTokens += remaining - most;
                }
            }
            System.out.printf(
                    Locale.ROOT,
                    "| calls | refunds made | decided by a failure policy | refunds late | lost "
                            + "(store) | unanswered (store) | keys short (tokens) | keys over (tokens) |%n"
                            + "|---|---|---|---|---|---|---|---|%n| %d | %d | %d | %d | %d | %d | %d (%d) | %d (%d) |%n",
                    calls.sum(),
                    refunds.sum(),
                    failOpen.sum(),
                    stats.lateRefunds(),
                    stats.lostRefunds(),
                    stats.unconfirmedRefunds(),
                    lostKeys,
                    lostTokens,
                    twiceKeys,
                    twiceTokens);
            System.out.printf(
                    Locale.ROOT,
                    "%d s, %d threads, %d clients; %.1f%% of chunks held 60-%d ms, the rest " + "0-3 ms; store: %s%n",
                    seconds,
                    threads,
                    clients,
                    slowShare * 100,
                    slowMillis,
                    stats);
        }
    }

    /** @return the tokens a client's bucket holds now, read with a peek (which takes none) */
    private static long remaining(Guard guard, int client) {
        RequestContext context =
                RequestContext.builder().remoteAddress(address(client)).build();
        Decision d = guard.peek(context, 1);
        if (d.binding().basis() != Basis.BUCKET) {
            throw new IllegalStateException("client " + client + " could not be read: " + d);
        }
        return d.binding().windows().get(0).remaining();
    }

    private static String address(int client) {
        return "10." + (client >> 16 & 255) + "." + (client >> 8 & 255) + "." + (client & 255);
    }

    private static int intArg(String[] args, String name, int otherwise) {
        return Integer.parseInt(arg(args, name, Integer.toString(otherwise)));
    }

    private static String arg(String[] args, String name, String otherwise) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return otherwise;
    }
}
