package io.github.ratelimit.servlet;

import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.plan-from=header:X-Plan} with the {@code web.xml} filter in a real Tomcat, on the local store and
 * on a real Redis: a request's plan gives its key the plan's limits; an entry of the key's own wins.
 */
class PlansFromRequestInContainerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void theRequestNamesItsPlan(String store, @TempDir Path dir) throws Exception {
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
        if (store.equals("redis")) {
            lines.add("ratelimit.redis.url=" + redis.uri());
            lines.add("ratelimit.redis.key-prefix=plans-" + System.nanoTime());
        }
        Path rules = Files.writeString(dir.resolve("ratelimit.properties"), String.join("\n", lines));
        try (TomcatServer server = TomcatServer.builder()
                .filterClass(RateLimitFilter.class.getName()).filterParam("config", "file:" + rules)
                .servletClass("ok", DryRunInContainerTest.Ok.class.getName(), false, "/*").start()) {
            assertThat(admitted(server, "k-1", "pro")).isEqualTo(5);
            assertThat(admitted(server, "k-2", null)).isEqualTo(2);
            assertThat(admitted(server, "k-3", "platinum")).isEqualTo(2);
            assertThat(admitted(server, "k-own", "pro")).as("the key's own entry wins").isEqualTo(3);
        }
    }

    private static int admitted(TomcatServer server, String key, String plan) throws Exception {
        int n = 0;
        for (int i = 0; i < 20; i++) {
            RawHttp.Response r = plan == null
                    ? RawHttp.send(server.port(), "GET", "/api/x", "X-Api-Key: " + key)
                    : RawHttp.send(server.port(), "GET", "/api/x", "X-Api-Key: " + key, "X-Plan: " + plan);
            if (r.status() != 200) {
                assertThat(r.status()).isEqualTo(429);
                return n;
            }
            n++;
        }
        return n;
    }
}
