package io.github.ratelimit.benchmarks.redis;

import java.util.SortedMap;

/**
 * One measured phase: one subject, one scenario, one round. Ratios per decision are {@code NaN} when the
 * quantity is unknown for the subject.
 *
 * @param subject the subject's id
 * @param scenario the load shape
 * @param round 1-based
 * @param decisions calls made
 * @param perSecond calls per second
 * @param p50Micros median latency of a call
 * @param p99Micros 99th percentile latency
 * @param clientCpuMicros CPU time of this JVM per decision (the subject's client, plus the benchmark's own small
 *        share)
 * @param redisCpuMicros CPU time of the Redis server per decision
 * @param roundTripsPerDecision commands clients sent, from commandstats, a pipeline of one decision counted once
 *        (see {@link Subject#roundTrips})
 * @param clientCommandsPerDecision commands clients sent, every command of a pipeline counted (see
 *        {@link Subject#clientCommands})
 * @param repliesPerDecision replies Redis wrote, a cross-check of the former
 * @param scriptCommandsPerDecision commands Redis ran inside scripts (all commandstats calls less the commands
 *        clients sent and the connections' and snapshots' housekeeping)
 * @param storeRoundTripsPerDecision round trips by the store's own count
 * @param retriesPerDecision compare-and-swap attempts that found the state changed
 * @param newKeysPerDecision keys used for the first time
 * @param rejected calls the bucket rejected
 * @param storeFailed calls decided without the store, or that threw
 * @param firstError the first exception a call threw, or {@code null}
 * @param store the store's own counters over the phase, or {@code null} when it keeps none
 * @param accountingProblem what did not add up in the round-trip accounting, or {@code null}
 * @param commandCalls calls of every command Redis ran for the decisions (sent, or run inside scripts), by name;
 *        housekeeping left out
 */
record Measurement(
        String subject,
        Scenario scenario,
        int round,
        long decisions,
        double perSecond,
        double p50Micros,
        double p99Micros,
        double clientCpuMicros,
        double redisCpuMicros,
        double roundTripsPerDecision,
        double clientCommandsPerDecision,
        double repliesPerDecision,
        double scriptCommandsPerDecision,
        double storeRoundTripsPerDecision,
        double retriesPerDecision,
        double newKeysPerDecision,
        long rejected,
        long storeFailed,
        String firstError,
        Subject.StoreCounters store,
        String accountingProblem,
        SortedMap<String, Long> commandCalls) {}
