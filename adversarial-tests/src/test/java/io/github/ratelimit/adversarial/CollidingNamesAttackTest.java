package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.IOException;
import java.security.Principal;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Attacks the boundaries between buckets where names meet: rules whose names differ only where the Redis key
 * encodes them ({@code api} with key {@code login:x} and {@code api:login} with key {@code x}; {@code a%3Ab} and
 * {@code a:b}; names that differ only in case), alternatives whose values could pose as each other (an anonymous
 * caller sending {@code X-Client: alice} and the authenticated alice under {@code user|header:X-Client}, and values
 * that spell another alternative's tag), parts of a combined key that could be split differently, and values posing
 * as the shared bucket of calls without a key. Every pair must have two buckets, with the local store and Redis.
 */
class CollidingNamesAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    /** Authenticates a request that names its user in {@code X-Test-User} (a test stand-in for a real login). */
    static final class TestAuthentication implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest request = (HttpServletRequest) req;
            String user = request.getHeader("X-Test-User");
            if (user == null) {
                chain.doFilter(req, res);
                return;
            }
            chain.doFilter(
                    new HttpServletRequestWrapper(request) {
                        @Override
                        public Principal getUserPrincipal() {
                            return () -> user;
                        }

                        @Override
                        public String getRemoteUser() {
                            return user;
                        }
                    },
                    res);
        }
    }

    private static UrlRule rule(String name, String key, String path) {
        return UrlRule.of(Rule.builder(name).key(key).limits("1/1h").build(), List.of(path), Set.of());
    }

    private void start(StoreKind store, UrlRule... rules) throws Exception {
        Target.Builder b = Target.builder(store, redis).before("authentication", new TestAuthentication());
        for (UrlRule r : rules) {
            b.rule(r);
        }
        target = b.start();
    }

    /** A request: a path and header lines. */
    private record Call(String path, List<String> headers) {
        static Call of(String path, String... headers) {
            return new Call(path, List.of(headers));
        }

        int send(int port) throws IOException {
            return RawHttp.send(port, "GET", path, headers).status();
        }
    }

    /** Each call's first request passes and its second is rejected: no two share a bucket. */
    private void assertSeparateBuckets(List<Call> calls) throws IOException {
        for (Call call : calls) {
            assertThat(call.send(target.port())).as("first %s", call).isEqualTo(200);
        }
        for (Call call : calls) {
            assertThat(call.send(target.port())).as("second %s", call).isEqualTo(429);
        }
        target.assertRedisKeysWellFormed(calls.size());
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void ruleNamesWithColonsDoNotMeetTheirNeighboursKeys(StoreKind store) throws Exception {
        start(
                store,
                rule("api", "header:X-Login", "/a/**"),
                rule("api:login", "ip", "/b/**"),
                rule("x", "header:X-K", "/c/**"),
                rule("x:y", "header:X-K", "/d/**"),
                rule("ip-rule", "ip", "/e/**"),
                rule("ip-rule:127.0.0.1", "global", "/f/**"));
        assertSeparateBuckets(List.of(
                Call.of("/a/1", "X-Login: login:127.0.0.1"), // rule api, key login:127.0.0.1
                Call.of("/b/1"), // rule api:login, key 127.0.0.1 (the same text unencoded)
                Call.of("/c/1", "X-K: y:z"),
                Call.of("/d/1", "X-K: z"),
                Call.of("/e/1"), // rule ip-rule, key 127.0.0.1
                Call.of("/f/1"))); // rule ip-rule:127.0.0.1, key *
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void ruleNamesThatSpellEachOthersEncodingHaveTheirOwnBuckets(StoreKind store) throws Exception {
        start(
                store,
                rule("a%3Ab", "header:X-K", "/a/**"),
                rule("a:b", "header:X-K", "/b/**"),
                rule("a%253Ab", "header:X-K", "/c/**"),
                rule("a%:b", "header:X-K", "/d/**"),
                rule("a%25%3Ab", "header:X-K", "/e/**"),
                rule("A:B", "header:X-K", "/f/**"),
                rule("a:b:", "header:X-K", "/g/**"),
                rule("a", "header:X-K", "/h/**"));
        assertSeparateBuckets(List.of(
                Call.of("/a/1", "X-K: v"),
                Call.of("/b/1", "X-K: v"),
                Call.of("/c/1", "X-K: v"),
                Call.of("/d/1", "X-K: v"),
                Call.of("/e/1", "X-K: v"),
                Call.of("/f/1", "X-K: v"),
                Call.of("/g/1", "X-K: v"),
                Call.of("/h/1", "X-K: b::v")));
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void anAnonymousCallerNamingAUserInAHeaderDoesNotSpendThatUsersTokens(StoreKind store) throws Exception {
        start(store, rule("alternatives", "user|header:X-Client", "/**"));
        assertSeparateBuckets(List.of(
                Call.of("/x", "X-Client: alice"), // header:X-Client=alice
                Call.of("/x", "X-Test-User: alice"), // user=alice
                Call.of("/x", "X-Client: user=alice"), // header:X-Client=user=alice
                Call.of("/x", "X-Test-User: header:X-Client=alice"), // user=header:X-Client=alice
                Call.of("/x", "X-Client: header:X-Client=alice"),
                Call.of("/x", "X-Test-User: user=alice"),
                Call.of("/x", "X-Client: \\~missing"),
                Call.of("/x", "X-Test-User: alice+bob")));
        // The authenticated alice is alice whatever header she also sends; the anonymous "alice" stays apart.
        assertThat(Call.of("/x", "X-Test-User: alice", "X-Client: carol").send(target.port()))
                .isEqualTo(429);
        assertThat(Call.of("/x", "X-Client: alice").send(target.port())).isEqualTo(429);
        // A blank principal is no user: the next alternative decides.
        assertThat(Call.of("/x", "X-Test-User: \t", "X-Client: dave").send(target.port()))
                .isEqualTo(200);
        assertThat(Call.of("/x", "X-Client: dave").send(target.port())).isEqualTo(429);
        // Neither alternative: no key, rejected rather than shared.
        assertThat(Call.of("/x").send(target.port())).isEqualTo(429);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void partsOfACombinedKeyCannotBeSplitDifferently(StoreKind store) throws Exception {
        start(store, rule("parts", "header:X-A+header:X-B", "/p/**"), rule("either", "header:X-A|header:X-B", "/q/**"));
        assertSeparateBuckets(List.of(
                Call.of("/p/1", "X-A: a+b", "X-B: c"),
                Call.of("/p/1", "X-A: a", "X-B: b+c"),
                Call.of("/p/1", "X-A: a\\", "X-B: +b"),
                Call.of("/p/1", "X-A: a\\+", "X-B: b"),
                Call.of("/p/1", "X-A: a", "X-B: \\+b"),
                Call.of("/p/1", "X-A: ~sha256:aa", "X-B: b"),
                Call.of("/q/1", "X-A: v"),
                Call.of("/q/1", "X-B: v"),
                Call.of("/q/1", "X-A: header:X-B=v"),
                Call.of("/q/1", "X-B: header:X-A=v")));
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void valuesPosingAsTheSharedBucketOfCallsWithoutAKeyHaveTheirOwn(StoreKind store) throws Exception {
        start(
                store,
                UrlRule.of(
                        Rule.builder("shared")
                                .key("header:X-K")
                                .limits("1/1h")
                                .onMissingKey(MissingKeyPolicy.SHARED)
                                .build(),
                        List.of("/**"),
                        Set.of()));
        assertSeparateBuckets(List.of(
                Call.of("/x"),
                Call.of("/x", "X-K: ~missing"),
                Call.of("/x", "X-K: \\~missing"),
                Call.of("/x", "X-K: ~"),
                Call.of("/x", "X-K: missing")));
        // Blank values are calls without a key: they share the one bucket, which is spent.
        assertThat(Call.of("/x", "X-K: ").send(target.port())).isEqualTo(429);
        assertThat(Call.of("/x", "X-K: \t ").send(target.port())).isEqualTo(429);
    }
}
