package io.github.ratelimit.benchmarks;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.metrics.DecisionObservations;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What observing decisions costs, in one run: the same local decision ({@code ip} rule, {@value #KEYS} client
 * addresses, limits never reached) made by three limiters.
 *
 * <ul>
 *   <li>{@code a_noObserver}: no observer, what an application without an {@code ObservationRegistry} runs (and one
 *       whose registry observes nothing: the starter then installs none);</li>
 *   <li>{@code b_registryWithoutHandlers}: an observer over a registry with no handler, whose observations are
 *       no-ops;</li>
 *   <li>{@code c_meterHandler}: an observer over a registry with Micrometer's meter handler, what Spring Boot with
 *       Actuator sets up: each decision also a {@code ratelimit.decision} timer sample.</li>
 * </ul>
 *
 * Read b/a and c/a.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Threads(1)
public class ObservationCost {

    static final int KEYS = 1024;

    private RateLimiter plain;
    private RateLimiter noHandlers;
    private RateLimiter metered;
    private Guard plainGuard;
    private Guard noHandlersGuard;
    private Guard meteredGuard;
    private RequestContext[] contexts;
    private int next;

    @Setup
    public void setUp() {
        contexts = new RequestContext[KEYS];
        for (int i = 0; i < KEYS; i++) {
            contexts[i] = RequestContext.builder()
                    .remoteAddress("10.0." + (i >> 8) + "." + (i & 255))
                    .build();
        }
        Rule rule = Rule.builder("bench-ip")
                .key("ip")
                .limits(LocalDecisionBenchmark.LIMITS)
                .build();
        plain = RateLimiter.builder().build();
        noHandlers = RateLimiter.builder()
                .observer(new DecisionObservations(ObservationRegistry.create()))
                .build();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(new SimpleMeterRegistry()));
        metered = RateLimiter.builder()
                .observer(new DecisionObservations(registry))
                .build();
        plainGuard = plain.guard(rule);
        noHandlersGuard = noHandlers.guard(rule);
        meteredGuard = metered.guard(rule);
    }

    @TearDown
    public void close() {
        for (Guard guard : new Guard[] {plainGuard, noHandlersGuard, meteredGuard}) {
            if (!guard.acquire(contexts[0]).permitted()) {
                throw new IllegalStateException("a bucket ran dry: the benchmark limits are too low for this machine");
            }
        }
        plain.close();
        noHandlers.close();
        metered.close();
    }

    private RequestContext context() {
        int i = next;
        next = (i + 1) & (KEYS - 1);
        return contexts[i];
    }

    @Benchmark
    public Decision a_noObserver() {
        return plainGuard.acquire(context());
    }

    @Benchmark
    public Decision b_registryWithoutHandlers() {
        return noHandlersGuard.acquire(context());
    }

    @Benchmark
    public Decision c_meterHandler() {
        return meteredGuard.acquire(context());
    }
}
