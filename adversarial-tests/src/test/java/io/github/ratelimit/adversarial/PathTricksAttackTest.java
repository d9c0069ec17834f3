package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Attacks URL rules through the request target: dot segments, doubled and encoded slashes, path parameters,
 * percent-encoded letters, query strings and fragments, and paths of many segments, all aimed at servlets behind
 * rules on {@code /admin/**} (a servlet mapped to {@code /admin/*}) and {@code /login} (an exact mapping). Whatever the
 * spelling, every request a limited servlet serves must have been counted by its rule: the servlets may be reached
 * no more often than the limits allow. Nothing may answer 5xx. With the local store and Redis.
 */
class PathTricksAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final int LIMIT = 3;

    private final Map<String, AtomicInteger> adminReached = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> loginReached = new ConcurrentHashMap<>();
    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    private void start(StoreKind store) throws Exception {
        target = Target.builder(store, redis)
                .rule(UrlRule.of(Rule.builder("admin").limits(LIMIT + "/1h").build(), List.of("/admin/**"), Set.of()))
                .rule(UrlRule.of(Rule.builder("login").limits(LIMIT + "/1h").build(), List.of("/login"), Set.of()))
                .servlet("admin", new Target.CountingServlet(adminReached), "/admin/*")
                .servlet("login", new Target.CountingServlet(loginReached), "/login")
                .start();
    }

    private static int total(Map<String, AtomicInteger> reached) {
        return reached.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    private int get(String path) throws IOException {
        int status = RawHttp.send(target.port(), "GET", path).status();
        assertThat(status)
                .as("GET %s", path.length() > 80 ? path.substring(0, 80) + "..." : path)
                .isBetween(200, 499);
        return status;
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void noSpellingOfAnAdminPathReachesTheServletUncounted(StoreKind store) throws Exception {
        start(store);
        List<String> paths = List.of(
                "/admin/x",
                "/admin",
                "/admin/",
                "/admin/../admin/x",
                "/x/../admin/x",
                "/./admin/x",
                "//admin/x",
                "/admin//x",
                "/admin/./x",
                "/admin;jsessionid=1/x",
                "/admin;/x",
                "/admin/x;a=b",
                "/%61dmin/x",
                "/%61%64%6d%69%6e/x",
                "/admin%2Fx",
                "/admin%2fx",
                "/admin/x%2F..%2F",
                "/admin/%2e%2e/admin/x",
                "/admin/x?y=1",
                "/admin/x#f",
                "/admin\\x",
                "/admin/x/",
                "/admin/" + "x/".repeat(30),
                "/admin/..;/admin/x",
                "/admin/%00",
                "/admin/%C0%AE%C0%AE/x");
        for (int round = 0; round < 3; round++) {
            for (String path : paths) {
                get(path);
            }
        }
        assertThat(total(adminReached)).as("requests the admin servlet served").isEqualTo(LIMIT);
    }

    /**
     * A servlet mapped to {@code /admin/*} serves {@code /admin/s/s/...} however deep; the rule on {@code /admin/**}
     * must count it however deep too.
     */
    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void pathsOfManySegmentsAreCountedToo(StoreKind store) throws Exception {
        start(store);
        for (int segments : List.of(10, 63, 64, 65, 100, 500, 1_000)) {
            for (int i = 0; i < 3; i++) {
                get("/admin" + "/s".repeat(segments));
            }
        }
        assertThat(total(adminReached))
                .as("requests the admin servlet served for paths of up to 1,000 segments")
                .isEqualTo(LIMIT);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void noSpellingOfAnExactPathReachesTheServletUncounted(StoreKind store) throws Exception {
        start(store);
        List<String> paths = List.of(
                "/login",
                "/login;x=1",
                "/login;",
                "/./login",
                "/x/../login",
                "//login",
                "/%6Cogin",
                "/login?a=b",
                "/login#x",
                "/login/.",
                "/login/..;/login",
                "/login%3B");
        for (int round = 0; round < 3; round++) {
            for (String path : paths) {
                get(path);
            }
        }
        assertThat(total(loginReached)).as("requests the login servlet served").isEqualTo(LIMIT);
    }
}
