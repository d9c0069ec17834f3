package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.spring.boot.actuate.RateLimitsEndpoint;
import io.github.ratelimit.spring.boot.actuate.RejectedKeys;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Metrics, the ratelimits endpoint and the store's health, over the auto-configured limiter. */
class ObservabilityTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /** Boot's own metrics auto-configurations create the registry, as in an application: no registry handed in. */
    private final ManualClock clock = new ManualClock();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of(
                    MetricsAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class))
            .withBean(RateLimitAutoConfiguration.TIME_METER_BEAN, ManualClock.class, () -> clock);

    @Test
    void leavesTheEndpointOutUnlessItIsExposed() {
        runner.run(context -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class));
    }

    private static void fire(RateLimiter limiter, Rule rule, String user, int times) {
        var guard = limiter.guard(rule);
        for (int i = 0; i < times; i++) {
            guard.acquire(RequestContext.builder().principal(user).build());
        }
    }

    @Test
    void countsDecisionsByRuleOutcomeAndBasisNeverByKey() {
        runner.run(context -> {
            RateLimiter limiter = context.getBean(RateLimiter.class);
            fire(limiter, Rule.builder("api").key("user").limits("2/1m").build(), "alice", 3);
            fire(limiter, Rule.builder("api").key("user").limits("2/1m").build(), "bob", 1);
            fire(
                    limiter,
                    Rule.builder("soft")
                            .limits("1/1s")
                            .mode(io.github.ratelimit.Mode.SOFT)
                            .maxDelay(Duration.ofSeconds(1))
                            .build(),
                    "x",
                    2);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("ratelimit.requests")
                            .tags("rule", "api", "outcome", "allowed", "basis", "bucket")
                            .counter()
                            .count())
                    .isEqualTo(3);
            assertThat(registry.get("ratelimit.requests")
                            .tags("rule", "api", "outcome", "rejected")
                            .counter()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("ratelimit.delay")
                            .tag("rule", "soft")
                            .timer()
                            .count())
                    .isEqualTo(1);
            assertThat(clock.awaitedNanos())
                    .as("the delay, waited on the manual clock")
                    .isEqualTo(1_000_000_000L);
            assertThat(registry.getMeters())
                    .allSatisfy(m -> assertThat(m.getId().getTags())
                            .noneMatch(t ->
                                    t.getValue().equals("alice") || t.getValue().equals("bob")));
        });
    }

    @Test
    void countsCallsNearTheirLimitAtTheConfiguredShare() {
        runner.withPropertyValues("ratelimit.near-limit=0.5").run(context -> {
            RateLimiter limiter = context.getBean(RateLimiter.class);
            Rule rule = Rule.builder("quota").key("user").limits("4/1m").build();
            fire(limiter, rule, "alice", 2);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find("ratelimit.near.limit").counter())
                    .as("2 of 4 left: not below half")
                    .isNull();
            fire(limiter, rule, "alice", 3);
            assertThat(registry.get("ratelimit.near.limit")
                            .tag("rule", "quota")
                            .counter()
                            .count())
                    .as("1 and 0 of 4 left; the fifth call was rejected")
                    .isEqualTo(2);
        });
    }

    @Test
    void refusesToStartWithANearLimitShareOutOfRange() {
        runner.withPropertyValues("ratelimit.near-limit=20")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("ratelimit.near-limit")
                        .hasMessageContaining("is not above 0 and at most 1")
                        .hasMessageContaining("e.g. 0.2"));
    }

    @Test
    void describesRulesStoreAndTopRejectedKeysInTheEndpoint() {
        new org.springframework.boot.test.context.runner.WebApplicationContextRunner()
                .withConfiguration(StarterAutoConfigurations.of())
                .withPropertyValues(
                        "management.endpoints.web.exposure.include=ratelimits",
                        "management.endpoint.ratelimits.show-values=always")
                .run(context -> {
                    RateLimiter limiter = context.getBean(RateLimiter.class);
                    Rule rule = Rule.builder("login").key("user").limits("1/1m").build();
                    fire(limiter, rule, "mallory", 5);
                    fire(limiter, rule, "alice", 2);
                    Map<String, Object> body =
                            context.getBean(RateLimitsEndpoint.class).rateLimits();
                    @SuppressWarnings("unchecked")
                    List<Map<String, Object>> rules = (List<Map<String, Object>>) body.get("rules");
                    assertThat(rules)
                            .singleElement()
                            .satisfies(r -> assertThat(r)
                                    .containsEntry("name", "login")
                                    .containsEntry("limits", List.of("1/1m")));
                    @SuppressWarnings("unchecked")
                    Map<String, Object> store = (Map<String, Object>) body.get("store");
                    assertThat(store).containsEntry("type", "LocalBucketStore");
                    @SuppressWarnings("unchecked")
                    List<RejectedKeys.Entry> top = (List<RejectedKeys.Entry>) body.get("topRejectedKeys");
                    assertThat(top).extracting(RejectedKeys.Entry::key).containsExactly("mallory", "alice");
                    assertThat(top.get(0).count()).isEqualTo(4);
                });
    }

    @Test
    void countsThePerKeyLimitsItRepairs() {
        runner.withPropertyValues(
                        "ratelimit.redis.url=" + redis.uri(),
                        "ratelimit.limit-store.enabled=true",
                        "ratelimit.redis.key-prefix=repairs-metric")
                .run(context -> {
                    RateLimiter limiter = context.getBean(RateLimiter.class);
                    limiter.guard(Rule.builder("api").key("user").limits("5/1m").build());
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("ratelimit.store.repairs")
                                    .tag("state", "limits")
                                    .functionCounter()
                                    .count())
                            .isZero();
                    // A string where the rule's hash of per-key limits belongs: the next change replaces it, and counts
                    // it.
                    try (var jedis = new redis.clients.jedis.Jedis(
                            redis.server().host(), redis.server().port())) {
                        jedis.set("repairs-metric:{limits}:rule:api", "garbage");
                    }
                    context.getBean(io.github.ratelimit.redis.LimitAdmin.class)
                            .setLimits("api", "user:alice", "9/1m", "ops");
                    assertThat(registry.get("ratelimit.store.repairs")
                                    .tag("state", "limits")
                                    .functionCounter()
                                    .count())
                            .isEqualTo(1);
                });
    }

    @Test
    void reportsRedisStoreHealthAndCountersFromItsBreaker() {
        runner.withPropertyValues("ratelimit.redis.url=" + redis.uri()).run(context -> {
            RateLimiter limiter = context.getBean(RateLimiter.class);
            // A list where the bucket belongs (a typo in redis-cli): replaced, not obeyed, and counted.
            var store = (io.github.ratelimit.redis.JedisBucketStore)
                    context.getBean(io.github.ratelimit.store.BucketStore.class);
            byte[] key = store.redisKey(
                    new io.github.ratelimit.store.BucketStore.Key("api", "*"),
                    io.github.ratelimit.Algorithm.TOKEN_BUCKET);
            try (var jedis = new redis.clients.jedis.Jedis(
                    redis.server().host(), redis.server().port())) {
                jedis.del(key);
                jedis.rpush(key, "garbage".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            fire(limiter, Rule.builder("api").limits("5/1m").build(), "x", 2);
            HealthIndicator health = context.getBean("rateLimitStoreHealthIndicator", HealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("ratelimit.store.round.trips")
                            .functionCounter()
                            .count())
                    .isEqualTo(2);
            // One after the other, each script went in a pipeline of its own (auto-pipelining is on by default).
            assertThat(registry.get("ratelimit.store.pipelines")
                            .functionCounter()
                            .count())
                    .isEqualTo(2);
            assertThat(registry.get("ratelimit.store.breaker.open").gauge().value())
                    .isZero();
            assertThat(registry.get("ratelimit.store.repairs")
                            .tag("state", "buckets")
                            .functionCounter()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("ratelimit.store.latency").timer().count()).isEqualTo(2);
            assertThat(registry.get("ratelimit.store.latency")
                            .timer()
                            .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS))
                    .isPositive();
        });
    }

    /**
     * Operators read the Redis store's latency as percentiles: every operation is recorded in a timer that publishes
     * p50, p95 and p99 (to Micrometer's backends and the endpoint, which shows the p99) and a histogram that Prometheus
     * scrapes and aggregates across instances.
     */
    @Test
    void publishesTheStoreLatencyAsPercentilesAHistogramAndInTheEndpoint() {
        new org.springframework.boot.test.context.runner.WebApplicationContextRunner()
                .withConfiguration(StarterAutoConfigurations.of(
                        MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class,
                        PrometheusMetricsExportAutoConfiguration.class))
                .withPropertyValues(
                        "ratelimit.redis.url=" + redis.uri(),
                        "ratelimit.redis.key-prefix=latency-" + System.nanoTime(),
                        "management.endpoints.web.exposure.include=ratelimits")
                .run(context -> {
                    var store = (io.github.ratelimit.redis.JedisBucketStore)
                            context.getBean(io.github.ratelimit.store.BucketStore.class);
                    fire(
                            context.getBean(RateLimiter.class),
                            Rule.builder("api").key("user").limits("100/1m").build(),
                            "x",
                            25);

                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry).isInstanceOf(PrometheusMeterRegistry.class);
                    Timer latency = registry.get("ratelimit.store.latency").timer();
                    assertThat(latency.count())
                            .as("one record per operation")
                            .isEqualTo(store.stats().decisions())
                            .isEqualTo(25);
                    HistogramSnapshot snapshot = latency.takeSnapshot();
                    assertThat(snapshot.percentileValues())
                            .extracting(ValueAtPercentile::percentile)
                            .containsExactly(0.5, 0.95, 0.99);
                    assertThat(snapshot.percentileValues())
                            .allSatisfy(v -> assertThat(v.value(java.util.concurrent.TimeUnit.NANOSECONDS))
                                    .isPositive());
                    assertThat(snapshot.histogramCounts())
                            .as("histogram buckets")
                            .isNotEmpty();

                    // Prometheus gets the histogram (its quantiles come from histogram_quantile over the buckets, which
                    // add up
                    // across instances), with buckets from 100 µs: a Redis round trip on a LAN is well under a
                    // millisecond.
                    String scrape = ((PrometheusMeterRegistry) registry).scrape();
                    assertThat(scrape)
                            .contains("# TYPE ratelimit_store_latency_seconds histogram")
                            .contains("ratelimit_store_latency_seconds_bucket{le=\"1.0E-4\"}")
                            .containsPattern("ratelimit_store_latency_seconds_bucket\\{le=\"\\+Inf\"} 25(\\.0)?\\n")
                            .containsPattern("ratelimit_store_latency_seconds_count 25(\\.0)?\\n");

                    @SuppressWarnings("unchecked")
                    Map<String, Object> endpointStore = (Map<String, Object>) context.getBean(RateLimitsEndpoint.class)
                            .rateLimits()
                            .get("store");
                    assertThat(endpointStore).containsKey("latencyP99Millis");
                    assertThat((Double) endpointStore.get("latencyP99Millis")).isPositive();
                });
    }

    @Test
    void sendsEveryScriptOnItsOwnWhenAutoPipeliningIsOff() {
        runner.withPropertyValues("ratelimit.redis.url=" + redis.uri(), "ratelimit.redis.auto-pipelining=false")
                .run(context -> {
                    // A rule of its own: a bucket another test wrote would cost this store a conflict's round trip.
                    fire(
                            context.getBean(RateLimiter.class),
                            Rule.builder("direct").limits("5/1m").build(),
                            "x",
                            2);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("ratelimit.store.round.trips")
                                    .functionCounter()
                                    .count())
                            .isEqualTo(2);
                    assertThat(registry.get("ratelimit.store.pipelines")
                                    .functionCounter()
                                    .count())
                            .isZero();
                });
        runner.withPropertyValues("ratelimit.redis.url=" + redis.uri(), "ratelimit.redis.auto-pipelining=sometimes")
                .run(context -> assertThat(context)
                        .getFailure()
                        .hasStackTraceContaining("Failed to bind properties under 'ratelimit.redis.auto-pipelining'")
                        .rootCause()
                        .hasMessage("ratelimit.redis.auto-pipelining: 'sometimes' is not a boolean. Use "
                                + "true or false."));
    }

    @Test
    void keepsTheSummaryOfRejectedKeysBounded() {
        RejectedKeys keys = new RejectedKeys(10);
        var limiter = RateLimiter.builder().listener(keys).build();
        var guard = limiter.guard(Rule.builder("api").key("user").limits("1/1h").build());
        for (int i = 0; i < 1000; i++) {
            guard.acquire(RequestContext.builder().principal("user-" + i).build());
            guard.acquire(RequestContext.builder().principal("user-" + i).build());
        }
        for (int i = 0; i < 50; i++) {
            guard.acquire(RequestContext.builder().principal("heavy").build());
        }
        assertThat(keys.top(100)).hasSizeLessThanOrEqualTo(10);
        assertThat(keys.top(1).get(0).key()).isEqualTo("heavy");
        limiter.close();
    }
}
