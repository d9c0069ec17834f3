package io.github.ratelimit.benchmarks.redis;

import java.util.List;

/**
 * Runs one measured phase: a fresh session of the subject, a warm-up on keys of its own, then the measured run on
 * fresh keys, between two snapshots of the server's counters (and of the subject's own, if it keeps any). Nothing
 * else talks to Redis in between except the snapshots themselves and, for our store, its clock calibration
 * (one EVALSHA every 10 s, counted as a round trip of the store).
 */
final class PhaseRunner {

    private final RedisTarget target;
    private final Options options;
    private final List<String> spreadKeys;

    PhaseRunner(RedisTarget target, Options options) {
        this.target = target;
        this.options = options;
        this.spreadKeys = Workloads.keys("user:", options.keys());
    }

    /**
     * @param command a commandstats name ({@code client|setname} for a subcommand)
     * @return whether it is connection or admin traffic rather than a decision's: the snapshots' INFO, a new
     *         connection's HELLO/AUTH/SELECT/CLIENT, the pool's PING, SCRIPT
     */
    static boolean isHousekeeping(String command) {
        int bar = command.indexOf('|');
        String base = bar < 0 ? command : command.substring(0, bar);
        return switch (base) {
            case "info", "hello", "auth", "select", "client", "ping", "script", "command", "memory", "pttl" -> true;
            default -> false;
        };
    }

    Measurement measure(Subject subject, Scenario scenario, int round) {
        List<String> keys = scenario.hot() ? Workloads.HOT_KEY : spreadKeys;
        int threads = scenario.threads(options);
        String space = scenario.code() + "-r" + round;
        try (Subject.Session session = subject.open()) {
            if (options.warmupSeconds() > 0) {
                Decider warmup = session.prepare(space + "-warm", keys, subject.throughputLimits());
                LoadRun.run(warmup, threads, keys.size(), options.warmupSeconds(), false);
            }
            Decider decider = session.prepare(space, keys, subject.throughputLimits());
            Subject.StoreCounters storeBefore = session.counters();
            ServerCounters before = target.counters();
            long cpuBefore = ProcessCpu.nanos();
            LoadRun.Result run = LoadRun.run(decider, threads, keys.size(), options.measureSeconds(), false);
            long cpuAfter = ProcessCpu.nanos();
            ServerCounters after = target.counters();
            Subject.StoreCounters storeAfter = session.counters();

            ServerCounters.Delta delta = after.since(before);
            Subject.StoreCounters store = storeAfter == null ? null : storeAfter.since(storeBefore);
            double n = Math.max(1, run.decisions());
            long retries = subject.retries(delta, store);
            long roundTrips = subject.roundTrips(delta);
            long clientCommands = subject.clientCommands(delta);
            long scriptCommands = delta.calls(name -> !isHousekeeping(name)) - clientCommands;
            return new Measurement(
                    subject.id(),
                    scenario,
                    round,
                    run.decisions(),
                    run.perSecond(),
                    run.latency().percentileMicros(0.50),
                    run.latency().percentileMicros(0.99),
                    cpuBefore < 0 ? Double.NaN : (cpuAfter - cpuBefore) / 1e3 / n,
                    delta.cpuNanos() / 1e3 / n,
                    roundTrips / n,
                    clientCommands / n,
                    delta.replies() / n,
                    scriptCommands / n,
                    store == null ? Double.NaN : store.roundTrips() / n,
                    retries < 0 ? Double.NaN : retries / n,
                    run.distinctKeys() / n,
                    run.rejected(),
                    run.storeFailed(),
                    run.firstError(),
                    store,
                    subject.accountingProblem(delta),
                    delta.callsByCommand(name -> !isHousekeeping(name)));
        }
    }
}
