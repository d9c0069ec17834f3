package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.servlet.testing.ContainerLog;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ratelimit.plan-from=header:X-Plan} with the {@code web.xml} filter in a real Tomcat, on the local store and
 * on a real Redis: a request's plan gives its key the plan's limits; an entry of the key's own wins. The header is the
 * word of the trusted proxy (127.0.0.1 here) only: the same header from another peer (127.0.0.2, a loopback address
 * too) names no plan, and a rules file that reads a plan header while trusting no proxy stops deployment.
 */
class PlansFromRequestInContainerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /** A peer that is no trusted proxy. */
    private static final String STRANGER = "127.0.0.2";

    private static Path rules(Path dir, String store, String... more) throws Exception {
        List<String> lines = new ArrayList<>(List.of(
                "ratelimit.rules[0].name=api",
                "ratelimit.rules[0].paths=/api/**",
                "ratelimit.rules[0].key=header:X-Api-Key",
                "ratelimit.rules[0].limits=2/1m",
                "ratelimit.plans.pro=5/1m",
                "ratelimit.plan-from=header:X-Plan",
                "ratelimit.plan-rules=api",
                "ratelimit.keys[0].key=header:X-Api-Key:k-own",
                "ratelimit.keys[0].limits=3/1m"));
        lines.addAll(List.of(more));
        if (store.equals("redis")) {
            lines.add("ratelimit.redis.url=" + redis.uri());
            lines.add("ratelimit.redis.key-prefix=plans-" + System.nanoTime());
        }
        return Files.writeString(dir.resolve("ratelimit.properties"), String.join("\n", lines));
    }

    private static TomcatServer start(Path rules) throws Exception {
        return TomcatServer.builder()
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .servletClass("ok", DryRunInContainerTest.Ok.class.getName(), false, "/*")
                .start();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void theRequestNamesItsPlan(String store, @TempDir Path dir) throws Exception {
        try (TomcatServer server = start(rules(dir, store, "ratelimit.trusted-proxies=127.0.0.1"))) {
            assertThat(admitted(server, null, "k-1", "pro")).isEqualTo(5);
            assertThat(admitted(server, null, "k-2", null)).isEqualTo(2);
            assertThat(admitted(server, null, "k-3", "platinum")).isEqualTo(2);
            assertThat(admitted(server, null, "k-own", "pro"))
                    .as("the key's own entry wins")
                    .isEqualTo(3);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aPlanHeaderFromAPeerThatIsNoTrustedProxyNamesNoPlan(String store, @TempDir Path dir) throws Exception {
        try (TomcatServer server = start(rules(dir, store, "ratelimit.trusted-proxies=127.0.0.1"))) {
            assertThat(admitted(server, STRANGER, "k-4", "pro"))
                    .as("the rule's own limits")
                    .isEqualTo(2);
            assertThat(admitted(server, null, "k-5", "pro"))
                    .as("from the trusted proxy")
                    .isEqualTo(5);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aPlanHeaderDeclaredTrustedIsBelievedFromEveryPeer(String store, @TempDir Path dir) throws Exception {
        try (TomcatServer server = start(rules(dir, store, "ratelimit.plan-header-trusted=true"))) {
            assertThat(admitted(server, STRANGER, "k-6", "pro")).isEqualTo(5);
        }
    }

    @Test
    void aPlanHeaderWithNoTrustedProxyStopsDeployment(@TempDir Path dir) throws Exception {
        Path rules = rules(dir, "local");
        List<String> logged = ContainerLog.deploymentFailures(() -> start(rules).close());
        assertThat(logged)
                .anySatisfy(m -> assertThat(m)
                        .startsWith(
                                "RateLimitFilter 'rateLimit' cannot start: file:" + rules + ": ratelimit.plan-from: "
                                        + "'header:X-Plan' takes the plan from the request header X-Plan, which any client can send, "
                                        + "and no proxy is trusted to set it (ratelimit.trusted-proxies is empty)")
                        .contains("List the proxies that set the header in ratelimit.trusted-proxies")
                        .contains("ratelimit.plan-header-trusted=true"));
    }

    private static int admitted(TomcatServer server, String from, String key, String plan) throws Exception {
        int n = 0;
        for (int i = 0; i < 20; i++) {
            RawHttp.Response r = plan == null
                    ? RawHttp.sendFrom(from, server.port(), "GET", "/api/x", "X-Api-Key: " + key)
                    : RawHttp.sendFrom(from, server.port(), "GET", "/api/x", "X-Api-Key: " + key, "X-Plan: " + plan);
            if (r.status() != 200) {
                assertThat(r.status()).isEqualTo(429);
                return n;
            }
            n++;
        }
        return n;
    }
}
