package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RulesFileTest {

    private static RulesFile.Settings parse(String... pairs) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put(pairs[i], pairs[i + 1]);
        }
        return RulesFile.parse(map, "rules.properties", RulesFileTest.class.getClassLoader());
    }

    @Test
    void readsRulesWithRelaxedValues() {
        RulesFile.Settings s = parse(
                "ratelimit.rules[0].name", "api",
                "ratelimit.rules[0].paths", "/api/**, /v2/**",
                "ratelimit.rules[0].methods", "get, post",
                "ratelimit.rules[0].key", "user|ip",
                "ratelimit.rules[0].limits", "5/1s, 100/1m",
                "ratelimit.rules[0].mode", "soft",
                "ratelimit.rules[0].max-delay", "500ms",
                "ratelimit.rules[0].on-store-failure", "fail-closed",
                "ratelimit.rules[3].paths", "/x",
                "ratelimit.rules[3].limits", "1/1s",
                "ratelimit.headers", "none",
                "ratelimit.reject-status", "503");
        try {
            assertThat(s.rules()).hasSize(2);
            UrlRule api = s.rules().get(0);
            assertThat(api.paths()).containsExactly("/api/**", "/v2/**");
            assertThat(api.methods()).containsExactlyInAnyOrder("GET", "POST");
            Rule rule = api.rule();
            assertThat(rule.key()).isEqualTo("user|ip");
            assertThat(rule.mode()).isEqualTo(Mode.SOFT);
            assertThat(rule.maxDelay()).isEqualTo(Duration.ofMillis(500));
            assertThat(rule.source()).isEqualTo("rules.properties: ratelimit.rules[0]");
            assertThat(s.rules().get(1).rule().name()).isEqualTo("rules[3]");
            assertThat(s.headers()).isEmpty();
            assertThat(s.rejectionHandler()).isInstanceOf(ProblemDetailsRejectionHandler.class);
            assertThat(api.matches("GET", "/api/x")).isTrue();
            assertThat(api.matches("DELETE", "/api/x")).isFalse();
        } finally {
            s.limiter().close();
        }
    }

    @Test
    void defaultsToBothHeaderStylesAndTheLocalStore() {
        RulesFile.Settings s = parse();
        try {
            assertThat(s.headers()).isEqualTo(Set.of(HeaderStyle.X_RATELIMIT, HeaderStyle.IETF_DRAFT_09));
            assertThat(s.enabled()).isTrue();
            assertThat(s.annotations()).isTrue();
        } finally {
            s.limiter().close();
        }
    }

    @Test
    void resolvesPlaceholdersFromSystemPropertiesWithDefaults() {
        System.setProperty("ratelimit.test.limit", "7/1s");
        try {
            RulesFile.Settings s = parse(
                    "ratelimit.rules[0].paths",
                    "/x",
                    "ratelimit.rules[0].limits",
                    "${ratelimit.test.limit}, ${NOT_SET_ANYWHERE:70/1m}");
            assertThat(s.rules().get(0).rule().limits()).hasToString("[7/1s, 70/1m]");
            s.limiter().close();
        } finally {
            System.clearProperty("ratelimit.test.limit");
        }
    }

    @Test
    void failsWithMessagesThatNameThePropertyAndTheFix() {
        assertThatThrownBy(() -> parse("ratelimit.rules[0].limits", "5/1s"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("rules.properties: ratelimit.rules[0].paths: not set. Give the paths the rule applies to, "
                        + "e.g. '/api/**'.");
        assertThatThrownBy(() -> parse(
                        "ratelimit.rules[0].paths",
                        "/x",
                        "ratelimit.rules[0].limits",
                        "5/1s",
                        "ratelimit.rules[0].cost",
                        "two"))
                .hasMessage(
                        "rules.properties: ratelimit.rules[0].cost: 'two' is not a whole number. Write digits, e.g. 1.");
        assertThatThrownBy(() -> parse("ratelimit.trusted-proxies", "10.0.0.0/33"))
                .hasMessageStartingWith("rules.properties: ratelimit.trusted-proxies: trusted proxy '10.0.0.0/33'");
        assertThatThrownBy(() -> parse("ratelimit.keys[0].key", "user:bob", "ratelimit.keys[0].plan", "gold"))
                .hasMessage("rules.properties: ratelimit.keys[0].plan: key 'user:bob' is assigned a plan that is not "
                        + "defined: plan 'gold' is not known; known plans: []. Define the plan first.");
        assertThatThrownBy(() -> parse("ratelimit.store", "redis"))
                .hasMessage("rules.properties: ratelimit.store: 'redis' needs a Redis server, but none of "
                        + "ratelimit.redis.url, ratelimit.redis.sentinel.master or ratelimit.redis.cluster.nodes is set. "
                        + "Set one of them, e.g. ratelimit.redis.url=redis://localhost:6379.");
        assertThatThrownBy(() -> parse("ratelimit.redis.url", "redis://a:1", "ratelimit.redis.cluster.nodes", "b:2"))
                .hasMessage("rules.properties: ratelimit.redis: more than one Redis server is configured: "
                        + "ratelimit.redis.url and ratelimit.redis.cluster.nodes are set. Keep exactly one of "
                        + "ratelimit.redis.url, ratelimit.redis.sentinel.master (with .nodes) and "
                        + "ratelimit.redis.cluster.nodes.");
        assertThatThrownBy(() -> parse("ratelimit.key-resolvers.tenant", "com.example.Missing"))
                .hasMessageStartingWith(
                        "rules.properties: ratelimit.key-resolvers.tenant = 'com.example.Missing' cannot be "
                                + "instantiated (java.lang.ClassNotFoundException: com.example.Missing).");
        assertThatThrownBy(() -> parse("ratelimit.rejection-handler", String.class.getName()))
                .hasMessage("rules.properties: ratelimit.rejection-handler: 'java.lang.String' is not a "
                        + "io.github.ratelimit.servlet.RejectionHandler. Implement RejectionHandler.");
        assertThatThrownBy(() -> parse("ratelimit.reject-status", "200"))
                .hasMessage(
                        "rules.properties: ratelimit.reject-status: '200' is out of range. Use a value from 400 to 599.");
        assertThatThrownBy(() -> parse("ratelimit.ipv6-prefix-length", "0"))
                .hasMessage(
                        "rules.properties: ratelimit.ipv6-prefix-length: '0' is out of range. Use a value from 1 to "
                                + "128.");
        assertThatThrownBy(() -> parse("ratelimit.rules[0].paths", "/x"))
                .hasMessage("rules.properties: ratelimit.rules[0].limits: not set. Give the rule's windows, e.g. "
                        + "'5/1s, 100/1m', or the calls in flight it allows per key, e.g. concurrency=2.");
        assertThatThrownBy(() -> parse("ratelimit.filter.order", "1"))
                .hasMessage(
                        "rules.properties: 'ratelimit.filter.order' is a setting of the Spring Boot starter, not of "
                                + "the web.xml filter. In web.xml, the order of the filter-mapping elements decides; remove the "
                                + "property.");
    }

    /** A calendar quota with no algorithm given is a fixed window; another algorithm given with one still fails. */
    @Test
    void aCalendarQuotaWithNoAlgorithmIsAFixedWindow() {
        RulesFile.Settings s = parse(
                "ratelimit.rules[0].name",
                "tokyo",
                "ratelimit.rules[0].paths",
                "/q/**",
                "ratelimit.rules[0].limits",
                "2/1d@Asia/Tokyo");
        try {
            assertThat(s.rules().get(0).rule().algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
        } finally {
            s.limiter().close();
        }
        assertThatThrownBy(() -> parse(
                        "ratelimit.rules[0].name",
                        "tokyo",
                        "ratelimit.rules[0].paths",
                        "/q/**",
                        "ratelimit.rules[0].limits",
                        "2/1d@Asia/Tokyo",
                        "ratelimit.rules[0].algorithm",
                        "token-bucket"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageStartingWith("rules.properties: ratelimit.rules[0]: limit '2/1d@Asia/Tokyo' is a calendar "
                        + "quota, a fixed window aligned to the calendar, which a TOKEN_BUCKET rule cannot count. Remove "
                        + "the algorithm");
    }

    @Test
    void rejectsTyposNamingTheNearestKnownProperty() {
        assertThatThrownBy(() -> parse("ratelimit.redis.ulr", "redis://x:1"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("rules.properties: unknown property 'ratelimit.redis.ulr'. Did you mean "
                        + "'ratelimit.redis.url'? Every property: docs/properties.md.");
        assertThatThrownBy(() -> parse("ratelimit.stor", "redis"))
                .hasMessageContaining("Did you mean 'ratelimit.store'?");
        assertThatThrownBy(() -> parse("ratelimit.rules[3].mehtods", "GET"))
                .hasMessageContaining("Did you mean 'ratelimit.rules[3].methods'?");
        assertThatThrownBy(() -> parse("ratelimit.default-store-failure-polcy", "fail-closed"))
                .hasMessageContaining("Did you mean 'ratelimit.default-store-failure-policy'?");
        assertThatThrownBy(() -> parse("ratelimit.nothing-like-any-property", "x"))
                .hasMessage("rules.properties: unknown property 'ratelimit.nothing-like-any-property'. Check its "
                        + "spelling. Every property: docs/properties.md.");
    }

    /** A custom resolver the rules file can name. */
    public static final class TenantResolver implements io.github.ratelimit.key.KeyResolver {
        @Override
        public String resolve(io.github.ratelimit.RequestContext context) {
            return context.header("X-Tenant");
        }
    }

    /** Found through META-INF/services in the test class path. */
    public static final class RegionResolver implements io.github.ratelimit.key.NamedKeyResolver {
        @Override
        public String name() {
            return "region";
        }

        @Override
        public String resolve(io.github.ratelimit.RequestContext context) {
            return context.header("X-Region");
        }
    }

    @Test
    void findsNamedKeyResolversWithServiceLoader() {
        RulesFile.Settings s = parse(
                "ratelimit.rules[0].paths",
                "/x",
                "ratelimit.rules[0].limits",
                "1/1s",
                "ratelimit.rules[0].key",
                "region");
        try {
            assertThat(s.limiter()
                            .guard(s.rules().get(0).rule())
                            .acquire(io.github.ratelimit.RequestContext.builder()
                                    .header("X-Region", "eu")
                                    .build())
                            .verdicts()
                            .get(0)
                            .key())
                    .isEqualTo("eu");
        } finally {
            s.limiter().close();
        }
    }

    @Test
    void loadsCustomKeyResolversByClassName() {
        RulesFile.Settings s = parse(
                "ratelimit.key-resolvers.tenant",
                TenantResolver.class.getName(),
                "ratelimit.rules[0].paths",
                "/x",
                "ratelimit.rules[0].limits",
                "1/1s",
                "ratelimit.rules[0].key",
                "tenant");
        try {
            assertThat(s.limiter()
                            .guard(s.rules().get(0).rule())
                            .acquire(io.github.ratelimit.RequestContext.builder()
                                    .header("X-Tenant", "acme")
                                    .build())
                            .verdicts()
                            .get(0)
                            .key())
                    .isEqualTo("acme");
        } finally {
            s.limiter().close();
        }
    }
}
