package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.HttpStatuses;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Attacks the inputs that decide what a request costs, against a real Tomcat on both stores: the count a client
 * claims ({@code permits=header:X-Items}: signs, exponents, other scripts' digits, 10 KB of digits, overflow), the
 * plan it names ({@code plan-from=header:X-Plan}: hundreds of made-up names, 10 KB names), and the statuses its
 * requests end with ({@code count=statuses:404}: codes out of range, which the application sets). Nothing answers 5xx; a weighed rule never lets
 * more than its limit's worth through however the count is spelt; made-up plans get the rule's own limits; and
 * only 404s keep their tokens.
 */
class ChargingInputsAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    /** Answers with the status the last path segment names (any integer Tomcat takes), else 200. */
    static final class StatusServlet extends HttpServlet {
        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String last = req.getRequestURI().substring(req.getRequestURI().lastIndexOf('/') + 1);
            try {
                resp.setStatus(Integer.parseInt(last));
            } catch (IllegalArgumentException e) {
                resp.setStatus(200);
            }
        }
    }

    private void start(StoreKind store) throws Exception {
        target = Target.builder(store, redis)
                .rule(UrlRule.of(
                        Rule.builder("weighed")
                                .key("header:X-Key")
                                .limits("10/1h")
                                .permits("header:X-Items")
                                .build(),
                        List.of("/w/**"),
                        Set.of()))
                .rule(UrlRule.of(
                        Rule.builder("planned")
                                .key("header:X-Key")
                                .limits("1/1h")
                                .build(),
                        List.of("/p/**"),
                        Set.of()))
                .rule(UrlRule.of(
                        Rule.builder("scanned")
                                .key("header:X-Key")
                                .limits("1/1h")
                                .count(HttpStatuses.parse("404"))
                                .build(),
                        List.of("/s/**"),
                        Set.of()))
                // The header stands for one a gateway sets on every request, so it is declared trusted here: the
                // attack is on the plan's name, not on who may send one (PlansFromRequestInContainerTest).
                .limiter(b -> b.planFrom(
                                "header:X-Plan", Map.of("pro", List.of(Limit.parse("3/1h"))), List.of("planned"))
                        .planHeaderTrusted(true))
                .servlet("statuses", new StatusServlet(), "/s/*")
                .tomcat(t -> t.getConnector().setProperty("maxHttpHeaderSize", "65536"))
                .start();
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void howeverTheCountIsSpeltAWeighedRuleLetsItsLimitThrough(StoreKind store) throws Exception {
        start(store);
        String digits = "9".repeat(10_000);
        List<String> claims = List.of(
                "",
                " ",
                "-1",
                "-0",
                "+3",
                "1e1",
                "0x3",
                "3.0",
                "3,4",
                "\u00bd",
                "\u00b3",
                "99999999999999999999",
                "9223372036854775807",
                "9223372036854775808",
                digits,
                "0",
                "1",
                "03",
                "11",
                "4",
                "5",
                "2");
        long admittedPermits = 0;
        for (String claim : claims) {
            RawHttp.Response r = RawHttp.send(target.port(), "GET", "/w/x", "X-Key: k1", "X-Items: " + claim);
            assertThat(r.status())
                    .as("X-Items '%s'", claim.length() > 20 ? claim.length() + " chars" : claim)
                    .isIn(200, 413, 429);
            if (r.status() == 200) {
                long n = Long.parseLong(claim.trim());
                admittedPermits += Math.max(1, n);
            }
            if (r.status() == 413) {
                assertThat(r.header("Retry-After")).isNull();
            }
        }
        // "0" (1), "1" (1), "03" (3), "4" (4) fit; "5" and "2" no longer do; the rest is refused or too large.
        assertThat(admittedPermits).as("never more than the limit").isEqualTo(9);
        assertThat(RawHttp.send(target.port(), "GET", "/w/x", "X-Key: k1", "X-Items: 1")
                        .status())
                .isEqualTo(200);
        assertThat(RawHttp.send(target.port(), "GET", "/w/x", "X-Key: k1", "X-Items: 1")
                        .status())
                .isEqualTo(429);
        target.assertRedisKeysWellFormed();
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void madeUpPlansGetTheRulesOwnLimits(StoreKind store) throws Exception {
        start(store);
        Random random = new Random(42);
        for (int i = 0; i < 300; i++) {
            String plan =
                    random.nextInt(10) == 0 ? "x".repeat(10_000) : Long.toString(random.nextLong(), 36) + "\u00e9";
            String key = "made-up-" + i;
            assertThat(RawHttp.send(target.port(), "GET", "/p/x", "X-Key: " + key, "X-Plan: " + plan)
                            .status())
                    .isEqualTo(200);
            assertThat(RawHttp.send(target.port(), "GET", "/p/x", "X-Key: " + key, "X-Plan: " + plan)
                            .status())
                    .as("plan '%s' is no plan: 1 an hour", plan.length() > 20 ? plan.length() + " chars" : plan)
                    .isEqualTo(429);
        }
        int pro = 0;
        for (int i = 0; i < 5; i++) {
            if (RawHttp.send(target.port(), "GET", "/p/x", "X-Key: real", "X-Plan: pro")
                            .status()
                    == 200) {
                pro++;
            }
        }
        assertThat(pro).isEqualTo(3);
        target.assertRedisKeysWellFormed();
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void onlyA404KeepsItsToken(StoreKind store) throws Exception {
        start(store);
        for (String code : List.of("200", "1404", "999", "4040", "403", "500", "599", "x")) {
            int status = RawHttp.send(target.port(), "GET", "/s/" + code, "X-Key: scanner")
                    .status();
            assertThat(status).as("/s/%s", code).isNotEqualTo(404).isNotEqualTo(429);
        }
        assertThat(RawHttp.send(target.port(), "GET", "/s/404", "X-Key: scanner")
                        .status())
                .isEqualTo(404);
        assertThat(RawHttp.send(target.port(), "GET", "/s/200", "X-Key: scanner")
                        .status())
                .as("the 404 kept the only token")
                .isEqualTo(429);
        target.assertRedisKeysWellFormed();
    }
}
