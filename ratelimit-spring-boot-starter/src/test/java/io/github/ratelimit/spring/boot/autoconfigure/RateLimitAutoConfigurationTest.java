package io.github.ratelimit.spring.boot.autoconfigure;

import static io.github.ratelimit.spring.boot.StartupFailures.configError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.servlet.RateLimitFilter;
import io.github.ratelimit.spring.boot.StarterAutoConfigurations;
import io.github.ratelimit.spring.boot.autoconfigure.diagnostics.InvalidRateLimitConfigurationFailureAnalyzer;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

class RateLimitAutoConfigurationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /** Time moves only when a test (or a SOFT delay) moves it: no test sleeps or counts on the wall clock. */
    private final ManualClock clock = new ManualClock();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    StarterAutoConfigurations.of(org.springframework.boot.autoconfigure.aop.AopAutoConfiguration.class))
            .withBean(RateLimitAutoConfiguration.TIME_METER_BEAN, ManualClock.class, () -> clock);

    /** A plain service, throttled like a client of a paid third-party API. */
    public static class QuoteService {

        @RateLimit(name = "quotes", perSecond = 3)
        public String quote() {
            return "42";
        }

        @RateLimit(name = "per-user", key = "#userId", perMinute = 2)
        public String forUser(String userId) {
            return userId;
        }

        @RateLimit(name = "per-tenant", key = "@tenants.of(#userId)", perMinute = 3)
        public String forTenant(String userId) {
            return userId;
        }

        @RateLimit(name = "slow-api", perSecond = 2, mode = Mode.SOFT, maxDelay = "2s")
        public String slow() {
            return "ok";
        }

        @RateLimit(name = "by-bean-key", key = "region", perMinute = 1)
        public String byRegion() {
            return "eu";
        }

        public String unlimited() {
            return "free";
        }

        @RateLimit(name = "trial", perMinute = 1, mode = Mode.SHADOW)
        public String trial() {
            return "tried";
        }
    }

    /** Maps users to tenants; referenced from a SpEL key. */
    public static class Tenants {
        public String of(String userId) {
            return userId.startsWith("acme-") ? "acme" : "other";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ServiceConfig {
        @Bean
        QuoteService quoteService() {
            return new QuoteService();
        }

        @Bean
        Tenants tenants() {
            return new Tenants();
        }

        @Bean
        KeyResolver region() {
            return context -> "eu-west";
        }
    }

    public static class BadKey {
        @RateLimit(key = "usr", perSecond = 1)
        public void call() {}
    }

    public static class BadSpel {
        @RateLimit(key = "#user..name", perSecond = 1)
        public void call() {}
    }

    public static class SoftWithoutDelay {
        @RateLimit(perSecond = 1, mode = Mode.SOFT)
        public void call() {}
    }

    /** The rate-limit configuration error in a failed start-up's cause chain. */
    @Test
    void createsALimiterOverTheLocalStoreByDefault() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RateLimiter.class);
            assertThat(context.getBean(BucketStore.class)).isInstanceOf(LocalBucketStore.class);
        });
    }

    @Test
    void backsOffForTheApplicationsOwnBeans() {
        BucketStore own = LocalBucketStore.create();
        RateLimiter ownLimiter = RateLimiter.builder().store(own).build();
        runner.withBean("myStore", BucketStore.class, () -> own)
                .withBean("myLimiter", RateLimiter.class, () -> ownLimiter)
                .run(context -> {
                    assertThat(context.getBean(BucketStore.class)).isSameAs(own);
                    assertThat(context.getBean(RateLimiter.class)).isSameAs(ownLimiter);
                });
    }

    @Test
    void turnsOffCompletely() {
        runner.withPropertyValues("ratelimit.enabled=false")
                .withUserConfiguration(ServiceConfig.class)
                .run(context -> {
                    assertThat(context).doesNotHaveBean(RateLimiter.class);
                    QuoteService s = context.getBean(QuoteService.class);
                    assertThat(AopUtils.isAopProxy(s)).isFalse();
                });
    }

    @Test
    void usesRedisWhenOneRedisPropertyIsSet() {
        runner.withPropertyValues("ratelimit.redis.url=" + redis.uri())
                .run(context -> assertThat(context.getBean(BucketStore.class)).isInstanceOf(JedisBucketStore.class));
    }

    /** The time-source bean is the clock of every store: here a shared Redis, read by the manual clock. */
    @Test
    void theTimeSourceBeanClocksTheRedisStoreAndTheLocalFallback() {
        String prefix = "clock-" + System.nanoTime();
        for (String redisProperty :
                List.of("ratelimit.redis.url=" + redis.uri(), "spring.data.redis.url=" + redis.uri())) {
            runner.withPropertyValues(redisProperty, "ratelimit.redis.key-prefix=" + prefix + redisProperty.length())
                    .run(context -> {
                        assertThat(context.getBean(BucketStore.class)).isInstanceOf(JedisBucketStore.class);
                        var guard = context.getBean(RateLimiter.class)
                                .guard(Rule.builder("hourly").limits("1/1h").build());
                        assertThat(guard.acquire(RequestContext.empty()).permitted())
                                .isTrue();
                        assertThat(guard.acquire(RequestContext.empty()).permitted())
                                .isFalse();
                        clock.advance(java.time.Duration.ofHours(1));
                        assertThat(guard.acquire(RequestContext.empty()).permitted())
                                .as("an hour later by the bean's clock (%s)", redisProperty)
                                .isTrue();
                    });
        }
    }

    @Test
    void reusesSpringDataRedisConnectionProperties() {
        runner.withPropertyValues(
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + redis.server().port())
                .run(context -> {
                    JedisBucketStore store = (JedisBucketStore) context.getBean(BucketStore.class);
                    Decision d = context.getBean(RateLimiter.class)
                            .guard(Rule.builder("x").limits("1/1m").build())
                            .acquire(RequestContext.empty());
                    assertThat(d.binding().basis()).isEqualTo(io.github.ratelimit.Decision.Basis.BUCKET);
                    assertThat(store.stats().decisions()).isEqualTo(1);
                });
    }

    @Test
    void staysLocalWhenAskedToDespiteRedisProperties() {
        runner.withPropertyValues("ratelimit.store=local", "spring.data.redis.host=127.0.0.1")
                .run(context -> assertThat(context.getBean(BucketStore.class)).isInstanceOf(LocalBucketStore.class));
    }

    @Test
    void saysHowToFixARedisStoreWithoutJedis() {
        runner.withClassLoader(new FilteredClassLoader("redis.clients.jedis"))
                .withPropertyValues("ratelimit.redis.url=redis://localhost:1")
                .run(context -> {
                    assertThat(configError(context))
                            .hasMessage("ratelimit.store: the Redis store needs "
                                    + "Jedis, which is not on the class path. Add the dependency redis.clients:jedis (7.x), or "
                                    + "set ratelimit.store=local.");
                });
        runner.withPropertyValues("ratelimit.store=redis")
                .run(context -> assertThat(configError(context))
                        .hasMessage("ratelimit.store: 'redis' needs a Redis server, but none of ratelimit.redis.url, "
                                + "ratelimit.redis.sentinel.master, ratelimit.redis.cluster.nodes or spring.data.redis.* is "
                                + "set. Set one of them, e.g. ratelimit.redis.url=redis://localhost:6379."));
    }

    /** ratelimit.rules[i]: a calendar quota with no algorithm is a fixed window; another algorithm given fails. */
    @Test
    void aCalendarQuotaWithNoAlgorithmIsAFixedWindow() {
        ApplicationContextRunner tokyo = runner.withPropertyValues(
                "ratelimit.rules[0].name=tokyo",
                "ratelimit.rules[0].paths=/q/**",
                "ratelimit.rules[0].limits=2/1d@Asia/Tokyo");
        tokyo.run(context -> assertThat(context.getBean(RateLimitSettings.class)
                        .rules()
                        .get(0)
                        .rule()
                        .algorithm())
                .isEqualTo(Algorithm.FIXED_WINDOW));
        tokyo.withPropertyValues("ratelimit.rules[0].algorithm=sliding-window-counter")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("ratelimit.rules[0]: limit '2/1d@Asia/Tokyo' "
                                + "is a calendar quota, a fixed window aligned to the calendar, which a SLIDING_WINDOW_COUNTER "
                                + "rule cannot count. Remove the algorithm"));
    }

    @Test
    void limitsAnnotatedMethodsOfAnyBean() {
        runner.withUserConfiguration(ServiceConfig.class).run(context -> {
            QuoteService s = context.getBean(QuoteService.class);
            assertThat(AopUtils.isAopProxy(s)).isTrue();
            for (int i = 0; i < 3; i++) {
                assertThat(s.quote()).isEqualTo("42");
            }
            assertThatThrownBy(s::quote)
                    .isInstanceOf(RateLimitExceededException.class)
                    .hasMessage("Rate limit of rule 'quotes' exceeded; retry after 1 s.");
            clock.advance(java.time.Duration.ofMillis(333));
            assertThatThrownBy(s::quote)
                    .as("a token refills in 333.3 ms")
                    .isInstanceOf(RateLimitExceededException.class);
            clock.advance(java.time.Duration.ofMillis(1));
            assertThat(s.quote()).isEqualTo("42");
            for (int i = 0; i < 10; i++) {
                assertThat(s.unlimited()).isEqualTo("free");
            }
        });
    }

    @Test
    void neverBlocksInShadowModeButReportsWouldBeRejections() {
        List<Decision> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        runner.withUserConfiguration(ServiceConfig.class)
                .withBean(io.github.ratelimit.RateLimiter.Listener.class, () -> heard::add)
                .run(context -> {
                    QuoteService s = context.getBean(QuoteService.class);
                    for (int i = 0; i < 3; i++) {
                        assertThat(s.trial()).isEqualTo("tried");
                    }
                    assertThat(heard)
                            .extracting(Decision::outcome)
                            .containsExactly(
                                    io.github.ratelimit.Decision.Outcome.ALLOWED,
                                    io.github.ratelimit.Decision.Outcome.SHADOW_REJECTED,
                                    io.github.ratelimit.Decision.Outcome.SHADOW_REJECTED);
                });
    }

    @Test
    void registersTheFailureAnalyzerWithSpringBoot() throws Exception {
        java.util.Properties factories = new java.util.Properties();
        try (var in = RateLimitAutoConfiguration.class.getResourceAsStream("/META-INF/spring.factories")) {
            factories.load(in);
        }
        assertThat(factories.getProperty("org.springframework.boot.diagnostics.FailureAnalyzer"))
                .contains(InvalidRateLimitConfigurationFailureAnalyzer.class.getName());
        // Spring Boot instantiates analyzers reflectively: a no-argument constructor must be there.
        assertThat(InvalidRateLimitConfigurationFailureAnalyzer.class.getDeclaredConstructor())
                .isNotNull();
    }

    @Test
    void keysBySpelOverArgumentsAndBeans() {
        runner.withUserConfiguration(ServiceConfig.class).run(context -> {
            QuoteService s = context.getBean(QuoteService.class);
            s.forUser("alice");
            s.forUser("alice");
            assertThatThrownBy(() -> s.forUser("alice")).isInstanceOf(RateLimitExceededException.class);
            assertThat(s.forUser("bob")).isEqualTo("bob");
            // Three calls per tenant, whichever of its users makes them.
            s.forTenant("acme-1");
            s.forTenant("acme-2");
            s.forTenant("acme-3");
            assertThatThrownBy(() -> s.forTenant("acme-4")).isInstanceOf(RateLimitExceededException.class);
            assertThat(s.forTenant("zeta-1")).isEqualTo("zeta-1");
        });
    }

    @Test
    void keysByKeyResolverBeansByName() {
        runner.withUserConfiguration(ServiceConfig.class).run(context -> {
            QuoteService s = context.getBean(QuoteService.class);
            s.byRegion();
            RateLimitExceededException e =
                    org.junit.jupiter.api.Assertions.assertThrows(RateLimitExceededException.class, s::byRegion);
            assertThat(e.decision().verdicts().get(0).key()).isEqualTo("eu-west");
        });
    }

    @Test
    void waitsInSoftModeInsteadOfRejecting() {
        runner.withUserConfiguration(ServiceConfig.class).run(context -> {
            QuoteService s = context.getBean(QuoteService.class);
            for (int i = 0; i < 3; i++) {
                assertThat(s.slow()).isEqualTo("ok");
            }
            // 2 per second: the third call waited for the next token, 500 ms.
            assertThat(clock.awaitedNanos()).isEqualTo(500_000_000L);
        });
    }

    @Test
    void refusesToStartOnAnUnknownKeyNamingTheMethod() {
        runner.withBean(BadKey.class).run(context -> {
            assertThat(configError(context))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessage("@RateLimit on BadKey#call(): unknown key 'usr'. Available: [basic-user, "
                            + "form-user[:<parameter>], global, "
                            + "header:<name>, ip, param:<name>, user]. Register custom keys with a KeyResolver.");
        });
    }

    @Test
    void refusesToStartOnABadSpelKeyOrASoftRuleWithoutMaxDelay() {
        runner.withBean(BadSpel.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith(
                                "@RateLimit on BadSpel#call(): key '#user..name' is not a valid SpEL expression"));
        runner.withBean(SoftWithoutDelay.class)
                .run(context -> assertThat(configError(context))
                        .hasMessage(
                                "@RateLimit on SoftWithoutDelay#call(): SOFT mode needs a positive maxDelay, but it is unset. "
                                        + "Set maxDelay, e.g. '500ms', to bound how long a request may wait."));
    }

    @Test
    void explainsConfigurationFailuresWithADescriptionAndAnActionFromTheExceptionsFields() {
        // Prose with "e.g." in both parts: nothing is split at a full stop.
        FailureAnalysis analysis = new InvalidRateLimitConfigurationFailureAnalyzer()
                .analyze(new IllegalStateException(new InvalidRateLimitConfigurationException(
                        "@RateLimit on A#b()",
                        "sfot",
                        "mode 'sfot' is not a mode, " + "e.g. a typo of soft",
                        "Use one of [hard, soft, shadow], e.g. 'soft'.")));
        assertThat(analysis.getDescription())
                .isEqualTo("Rate limiting is misconfigured: @RateLimit on A#b(): mode "
                        + "'sfot' is not a mode, e.g. a typo of soft");
        assertThat(analysis.getAction()).isEqualTo("Use one of [hard, soft, shadow], e.g. 'soft'.");
        // A message alone is described whole, with a generic action.
        FailureAnalysis plain = new InvalidRateLimitConfigurationFailureAnalyzer()
                .analyze(new IllegalStateException(
                        new InvalidRateLimitConfigurationException("something custom. With e.g. more. Sentences.")));
        assertThat(plain.getDescription())
                .isEqualTo("Rate limiting is misconfigured: something custom. With e.g. " + "more. Sentences.");
        assertThat(plain.getAction()).startsWith("Correct the value named above");
    }

    @Test
    void analyzesARealStartUpFailureIntoItsFields() {
        runner.withBean(BadKey.class).run(context -> {
            FailureAnalysis analysis =
                    new InvalidRateLimitConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis.getDescription())
                    .isEqualTo("Rate limiting is misconfigured: @RateLimit on " + "BadKey#call(): unknown key 'usr'");
            assertThat(analysis.getAction())
                    .isEqualTo("Available: [basic-user, form-user[:<parameter>], global, "
                            + "header:<name>, ip, param:<name>, user]. Register custom keys with a KeyResolver.");
        });
    }

    @Test
    void analyzesAValueSpringCannotConvertIntoTheRulesFilesMessage() {
        runner.withPropertyValues(
                        "ratelimit.rules[0].paths=/x",
                        "ratelimit.rules[0].limits=1/1s",
                        "ratelimit.rules[0].max-delay=soon")
                .run(context -> {
                    FailureAnalysis analysis =
                            new InvalidRateLimitConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription())
                            .isEqualTo("Rate limiting is misconfigured: "
                                    + "ratelimit.rules[0].max-delay: 'soon' is not a duration");
                    assertThat(analysis.getAction())
                            .isEqualTo("Use <number><unit> with unit ms, s, m, h or d, e.g. " + "'500ms', '1s', '1m'.");
                });
    }

    @Test
    void bindsPlansAndPerKeyLimits() {
        runner.withPropertyValues(
                        "ratelimit.plans.pro=5/1m",
                        "ratelimit.keys[0].key=user:bob",
                        "ratelimit.keys[0].plan=pro",
                        "ratelimit.keys[1].key=user:carol",
                        "ratelimit.keys[1].limits=1/1m")
                .run(context -> {
                    var guard = context.getBean(RateLimiter.class)
                            .guard(Rule.builder("api")
                                    .key("user")
                                    .limits("2/1m")
                                    .build());
                    List<Boolean> bob = new ArrayList<>();
                    for (int i = 0; i < 6; i++) {
                        bob.add(guard.acquire(RequestContext.builder()
                                        .principal("bob")
                                        .build())
                                .permitted());
                    }
                    assertThat(bob).containsExactly(true, true, true, true, true, false);
                    assertThat(guard.acquire(RequestContext.builder()
                                            .principal("carol")
                                            .build())
                                    .permitted())
                            .isTrue();
                    assertThat(guard.acquire(RequestContext.builder()
                                            .principal("carol")
                                            .build())
                                    .permitted())
                            .isFalse();
                });
    }

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of())
            .withBean(RateLimitAutoConfiguration.TIME_METER_BEAN, ManualClock.class, () -> clock);

    @Test
    void registersTheFilterForUrlRulesAfterSpringSecurity() {
        web.withPropertyValues(
                        "ratelimit.rules[0].name=api",
                        "ratelimit.rules[0].paths=/api/**",
                        "ratelimit.rules[0].key=ip",
                        "ratelimit.rules[0].limits=5/1s,100/1m")
                .run(context -> {
                    @SuppressWarnings("unchecked")
                    FilterRegistrationBean<RateLimitFilter> registration =
                            context.getBean("rateLimitFilter", FilterRegistrationBean.class);
                    assertThat(registration.isEnabled()).isTrue();
                    assertThat(registration.getOrder()).isEqualTo(-99);
                    MockHttpServletResponse api = new MockHttpServletResponse();
                    registration.getFilter().doFilter(request("/api/orders"), api, new MockFilterChain());
                    assertThat(api.getHeader("X-RateLimit-Remaining"))
                            .as("a request the rule applies to")
                            .isEqualTo("4");
                    MockHttpServletResponse other = new MockHttpServletResponse();
                    registration.getFilter().doFilter(request("/other"), other, new MockFilterChain());
                    assertThat(other.getHeader("X-RateLimit-Remaining"))
                            .as("a request outside /api/**")
                            .isNull();
                });
    }

    /** A GET of a path within the application, as the container hands it to the filters. */
    private static MockHttpServletRequest request(String path) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", path);
        request.setServletPath(path);
        request.setRemoteAddr("192.0.2.1");
        return request;
    }

    @Test
    void bindsLocalFirstOnUrlRulesLikeTheRulesFile() {
        web.withPropertyValues(
                        "ratelimit.rules[0].name=global",
                        "ratelimit.rules[0].paths=/**",
                        "ratelimit.rules[0].limits=10000/1s",
                        "ratelimit.rules[0].local-first-tokens=100",
                        "ratelimit.rules[0].local-first-time=50ms")
                .run(context -> {
                    // The filter compiled its URL rule on the limiter at start-up.
                    assertThat(context.getBean(RateLimiter.class).rules())
                            .singleElement()
                            .extracting(Rule::localFirst)
                            .isEqualTo(new io.github.ratelimit.Rule.LocalFirst(100, java.time.Duration.ofMillis(50)));
                });
        web.withPropertyValues(
                        "ratelimit.rules[0].paths=/**",
                        "ratelimit.rules[0].limits=10/1s",
                        "ratelimit.rules[0].local-first-tokens=100")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith(
                                "ratelimit.rules[0]: local-first maxUnsyncedTokens 100 exceeds the capacity 10"));
    }

    @Test
    void leavesTheFilterOffWithoutUrlRulesOrSpringMvc() {
        web.withClassLoader(new FilteredClassLoader("org.springframework.web.servlet"))
                .run(context -> assertThat(context.getBean("rateLimitFilter", FilterRegistrationBean.class)
                                .isEnabled())
                        .isFalse());
        // Under Spring MVC it decides the rules of the handlers' annotations, URL rules or not.
        web.run(context -> assertThat(context.getBean("rateLimitFilter", FilterRegistrationBean.class)
                        .isEnabled())
                .isTrue());
    }

    @Test
    void refusesToStartOnABadUrlRuleNamingTheProperty() {
        web.withPropertyValues("ratelimit.rules[0].paths=/api/**", "ratelimit.rules[0].limits=100/x")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith(
                                "ratelimit.rules[0]: limits[0]: invalid limit '100/x': period 'x' is not a duration."));
        web.withPropertyValues("ratelimit.rules[0].limits=1/1s")
                .run(
                        context -> assertThat(configError(context))
                                .hasMessage(
                                        "ratelimit.rules[0].paths: not set. Give the paths the rule applies to, e.g. '/api/**'."));
        web.withPropertyValues("ratelimit.trusted-proxies=10.0.0.0/33")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("ratelimit.trusted-proxies: trusted proxy '10.0.0.0/33'"));
    }
}
