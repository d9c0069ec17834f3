package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
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
 * Attacks URL rules through the request method: the eight standard methods, lower- and mixed-case spellings, WebDAV
 * and made-up methods, every token character, and a method token of thousands of characters. A rule without methods
 * counts every request that reaches the filter, whatever its method; a rule for {@code GET} also counts {@code HEAD}
 * and {@code get} (served by, or aimed at, the GET handler) but not other methods; changing the method never buys a
 * fresh bucket, and no method makes the server answer 5xx (other than a servlet's own 501 for a method it does not
 * implement, or Tomcat's to {@code CONNECT}) or not at all. With the local store and Redis.
 */
class HttpMethodsAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final int ANY_LIMIT = 3;
    private static final int GET_LIMIT = 5;

    private final Map<String, AtomicInteger> plainReached = new ConcurrentHashMap<>();
    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    /** Implements doGet only, like most servlets: HEAD is served by doGet, other methods get 405 or 501. */
    private final class GetOnly extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            plainReached
                    .computeIfAbsent(req.getMethod(), m -> new AtomicInteger())
                    .incrementAndGet();
            resp.getWriter().write("ok");
        }
    }

    private void start(StoreKind store) throws Exception {
        target = Target.builder(store, redis)
                .rule(UrlRule.of(
                        Rule.builder("every-method")
                                .key("header:X-Run")
                                .limits(ANY_LIMIT + "/1h")
                                .build(),
                        List.of("/any/**"),
                        Set.of()))
                .rule(UrlRule.of(
                        Rule.builder("get-only")
                                .key("global")
                                .limits(GET_LIMIT + "/1h")
                                .build(),
                        List.of("/plain"),
                        Set.of("GET")))
                .servlet("plain", new GetOnly(), "/plain")
                .start();
    }

    private static final List<String> METHODS = List.of(
            "GET",
            "HEAD",
            "POST",
            "PUT",
            "DELETE",
            "PATCH",
            "OPTIONS",
            "TRACE",
            "get",
            "Get",
            "hEAD",
            "post",
            "Delete",
            "options",
            "trace",
            "PROPFIND",
            "PROPPATCH",
            "MKCOL",
            "COPY",
            "MOVE",
            "LOCK",
            "UNLOCK",
            "SEARCH",
            "REPORT",
            "MKCALENDAR",
            "QUERY",
            "PURGE",
            "BREW",
            "M-SEARCH",
            "X",
            "0",
            "FOO.BAR",
            "CONNECT",
            "!#$%&'*+-.^_`|~",
            "G\u00c9T");

    private int send(String method, String path, String... headers) throws IOException {
        int status = RawHttp.send(target.port(), method, path, headers).status();
        String shown = method.length() > 40 ? method.substring(0, 40) + "..." : method;
        if (status == 501 && (path.equals("/plain") || method.equals("CONNECT"))) {
            // HttpServlet's own answer to a method it does not implement; Tomcat's to CONNECT, before any filter.
            return status;
        }
        assertThat(status).as("%s %s", shown, path).isBetween(200, 499);
        return status;
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void aRuleWithoutMethodsCountsEveryMethodThatReachesTheFilter(StoreKind store) throws Exception {
        start(store);
        for (String method : METHODS) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < ANY_LIMIT + 3; i++) {
                statuses.add(send(method, "/any/x", "X-Run: " + method));
            }
            int reached =
                    target.reached.getOrDefault(method, new AtomicInteger()).get();
            long limited = statuses.stream().filter(s -> s == 429).count();
            if (reached == 0 && limited == 0) {
                // Refused by the container before any filter (Tomcat refuses TRACE unless allowTrace is set, and
                // answers CONNECT with 501).
                assertThat(statuses)
                        .as("%s refused by the container", method)
                        .allMatch(s -> (s >= 400 && s < 500) || (s == 501 && method.equals("CONNECT")));
            } else {
                assertThat(reached)
                        .as("%s requests that reached the servlet, statuses %s", method, statuses)
                        .isEqualTo(ANY_LIMIT);
                assertThat(limited)
                        .as("%s requests rejected, statuses %s", method, statuses)
                        .isEqualTo(3);
            }
        }
        assertThat(target.reached.keySet())
                .as("methods served")
                .contains(
                        "GET",
                        "HEAD",
                        "POST",
                        "PUT",
                        "DELETE",
                        "PATCH",
                        "OPTIONS",
                        "get",
                        "PROPFIND",
                        "BREW",
                        "!#$%&'*+-.^_`|~");
        target.assertRedisKeysWellFormed(target.reached.size());
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void changingTheMethodDoesNotBuyAFreshBucket(StoreKind store) throws Exception {
        start(store);
        int limited = 0;
        for (String method : METHODS) {
            if (send(method, "/any/x", "X-Run: one-client") == 429) {
                limited++;
            }
        }
        assertThat(target.reachedTotal()).isEqualTo(ANY_LIMIT);
        assertThat(limited).isGreaterThanOrEqualTo(METHODS.size() - ANY_LIMIT - 3);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void aGetRuleCountsHeadAndLowerCaseGetButNotOtherMethods(StoreKind store) throws Exception {
        start(store);
        for (int i = 0; i < 10; i++) {
            assertThat(send("POST", "/plain"))
                    .as("POST is not GET: 405, never 429")
                    .isEqualTo(405);
            assertThat(send("PUT", "/plain")).isEqualTo(405);
            assertThat(send("PROPFIND", "/plain"))
                    .as("a method the servlet does not know")
                    .isIn(405, 501);
        }
        // Five GET-like requests spend the five tokens, whatever their spelling.
        assertThat(send("HEAD", "/plain")).isEqualTo(200);
        assertThat(send("head", "/plain")).isNotEqualTo(429);
        assertThat(send("get", "/plain")).isNotEqualTo(429);
        assertThat(send("Get", "/plain")).isNotEqualTo(429);
        assertThat(send("GET", "/plain")).isEqualTo(200);
        for (String method : List.of("GET", "HEAD", "gEt", "hEaD", "get")) {
            assertThat(send(method, "/plain")).as(method).isEqualTo(429);
        }
        assertThat(plainReached.values().stream().mapToInt(AtomicInteger::get).sum())
                .isEqualTo(2);
        target.assertRedisKeysWellFormed(1);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void absurdlyLongMethodTokensAreCountedOrRefusedButNeverFail(StoreKind store) throws Exception {
        start(store);
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String method = ("M" + i).repeat(3_500); // 7,000 characters: within Tomcat's 8 KB head
            statuses.add(send(method, "/any/x", "X-Run: long"));
        }
        assertThat(statuses).as("7,000-character methods").containsOnly(200, 429);
        assertThat(statuses.stream().filter(s -> s == 200).count()).isEqualTo(ANY_LIMIT);
        // Beyond the head limit the container refuses the request line.
        for (int i = 0; i < 3; i++) {
            assertThat(send("X".repeat(20_000), "/any/x", "X-Run: longer")).isEqualTo(400);
        }
        // Bytes that are no token make the request line malformed.
        for (String method : List.of("GE T", "GET\u0000", "GE\tT", "GET(", "G\"T", "GET/")) {
            int status =
                    RawHttp.send(target.port(), method, "/any/x", "X-Run: bad").status();
            assertThat(status).as("method %s", method.replace("\u0000", "\\0")).isEqualTo(400);
        }
        assertThat(target.reachedTotal()).isEqualTo(ANY_LIMIT);
    }
}
