package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Rule;
import io.github.ratelimit.Rule.Counted;
import io.github.ratelimit.internal.web.Phase;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Attacks the limits on authentication attempts with bad credentials: {@code Authorization} headers with malformed
 * Base64, no colon, an empty or blank user, huge values, bytes that are not UTF-8, NUL, other schemes and odd
 * spellings of {@code Basic}; wrong passwords from rotating addresses behind the trusted proxy. The rate-limit
 * filter decides before a Basic authentication filter, with rules that count only failed attempts: 20 an hour per
 * address ({@code ip}) and 5 per claimed user name ({@code basic-user}, skipped when there is none). Nothing may
 * answer 5xx, the attempts that reach the authentication stay within the limits, and right passwords do not count.
 * With the local store and Redis.
 */
class CredentialsAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final int PER_ADDRESS = 20;
    private static final int PER_USER = 5;

    private final AtomicInteger checked = new AtomicInteger();
    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    /**
     * Basic authentication where each user (lower-case letters) has the name as password; anything it cannot
     * read is a 401, so any 5xx comes from elsewhere. Counts the credentials it checks.
     */
    private final class BasicAuthentication implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest request = (HttpServletRequest) req;
            HttpServletResponse response = (HttpServletResponse) res;
            String header = request.getHeader("Authorization");
            String user = null;
            checked.incrementAndGet();
            if (header != null && header.regionMatches(true, 0, "Basic ", 0, 6)) {
                try {
                    String[] credentials = new String(
                                    Base64.getDecoder()
                                            .decode(header.substring(6).trim()),
                                    StandardCharsets.UTF_8)
                            .split(":", 2);
                    if (credentials.length == 2
                            && credentials[0].matches("[a-z]+")
                            && credentials[0].equals(credentials[1])) {
                        user = credentials[0];
                    }
                } catch (IllegalArgumentException e) {
                    user = null;
                }
            }
            if (user == null) {
                response.setHeader("WWW-Authenticate", "Basic realm=\"test\"");
                response.sendError(401);
                return;
            }
            String name = user;
            chain.doFilter(
                    new HttpServletRequestWrapper(request) {
                        @Override
                        public Principal getUserPrincipal() {
                            return () -> name;
                        }
                    },
                    response);
        }
    }

    private void start(StoreKind store) throws Exception {
        target = Target.builder(store, redis)
                .clientIp(ClientIpResolver.builder().trustedProxies("127.0.0.1").build())
                .ruleBeforeAuthentication(UrlRule.of(
                        Rule.builder("attempts-by-address")
                                .key("ip")
                                .limits(PER_ADDRESS + "/1h")
                                .count(Counted.FAILURES)
                                .build(),
                        List.of("/**"),
                        Set.of(),
                        Phase.BEFORE_AUTHENTICATION))
                .ruleBeforeAuthentication(UrlRule.of(
                        Rule.builder("attempts-by-user")
                                .key("basic-user")
                                .limits(PER_USER + "/1h")
                                .count(Counted.FAILURES)
                                .onMissingKey(MissingKeyPolicy.SKIP)
                                .build(),
                        List.of("/**"),
                        Set.of(),
                        Phase.BEFORE_AUTHENTICATION))
                .authentication("authentication", new BasicAuthentication())
                .rule(UrlRule.of(
                        Rule.builder("calls-by-user")
                                .key("user")
                                .limits("1000/1h")
                                .build(),
                        List.of("/**"),
                        Set.of()))
                .start();
    }

    private static String basic(String credentials) {
        return basic(credentials.getBytes(StandardCharsets.UTF_8));
    }

    private static String basic(byte[] credentials) {
        return "Basic " + Base64.getEncoder().encodeToString(credentials);
    }

    private int send(String... headers) throws IOException {
        int status = RawHttp.send(target.port(), "GET", "/me", headers).status();
        assertThat(status).as("GET /me with %s", abbreviate(List.of(headers))).isIn(200, 400, 401, 429);
        return status;
    }

    private static String abbreviate(Object o) {
        String s = String.valueOf(o);
        return s.length() <= 200 ? s : s.substring(0, 200) + "... (" + s.length() + " chars)";
    }

    /** Authorization headers that authenticate nobody. */
    private static List<String> malformedAuthorizations() {
        List<String> values = new ArrayList<>(List.of(
                "Basic !!!!",
                "Basic ====",
                "Basic =",
                "Basic a",
                "Basic YWxpY2U6eA",
                "Basic YW=xpY2U6eA==",
                "Basic " + Base64.getUrlEncoder().encodeToString(new byte[] {-5, -1, ':', -2}),
                basic("alice"),
                basic(":alice"),
                basic("   :x"),
                basic(":"),
                basic("::"),
                basic(""),
                basic(new byte[] {(byte) 0xff, (byte) 0xfe, ':', 'x'}),
                basic(new byte[] {(byte) 0xc3, ':', 'x'}),
                basic("ali\u0000ce:x"),
                basic("alice\u0000:alice"),
                basic("\u0000:\u0000"),
                basic("a".repeat(3_000) + ":x"),
                basic("a".repeat(5_000) + ":" + "a".repeat(5_000).substring(0, 10)),
                "Basic \u00ff\u00fe\u0080",
                "Bearer " + "x".repeat(100),
                "Digest username=\"alice\", realm=\"r\"",
                "Negotiate YWxpY2U6eA==",
                "Basic",
                "Basic ",
                "Basic\t" + Base64.getEncoder().encodeToString("alice:x".getBytes(StandardCharsets.UTF_8)),
                "Basic:" + basic("alice:x").substring(6),
                "NotBasic " + basic("alice:x").substring(6),
                "Basic " + basic("alice:x"),
                "\u00e9",
                ","));
        values.add("Basic " + "QUFB".repeat(1_800)); // 7 KB of valid Base64 without a colon
        return values;
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void malformedCredentialsNeverFailAndStayWithinThePerAddressLimit(StoreKind store) throws Exception {
        start(store);
        List<String> values = malformedAuthorizations();
        int limited = 0;
        for (int round = 0; round < 3; round++) {
            for (String value : values) {
                if (send("Authorization: " + value) == 429) {
                    limited++;
                }
            }
        }
        assertThat(checked.get())
                .as("credentials that reached the authentication")
                .isEqualTo(PER_ADDRESS);
        assertThat(limited).isEqualTo(3 * values.size() - PER_ADDRESS);
        target.assertRedisKeysWellFormed();
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void controlBytesAndLineBreaksInCredentialsAreRefusedNotFailed(StoreKind store) throws Exception {
        start(store);
        for (String value : List.of(
                "Basic YWxp\u0000Y2U6eA==",
                "Basic YWxpY2U6eA==\r",
                "Basic \nYWxpY2U6eA==",
                "Basic\u0001YWxpY2U6eA==",
                "Basic YWxpY2U6eA==\u007f")) {
            assertThat(RawHttp.send(target.port(), "GET", "/me", "Authorization: " + value)
                            .status())
                    .as("Authorization %s", value.replaceAll("\\p{Cntrl}", "?"))
                    .isEqualTo(400);
        }
        assertThat(checked.get()).isZero();
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void wrongPasswordsFromRotatingAddressesStopAtThePerUserLimitWhateverTheSchemesSpelling(StoreKind store)
            throws Exception {
        start(store);
        List<String> spellings = List.of("Basic ", "basic ", "BASIC ", "bAsIc ", "Basic  ", "Basic \t");
        int limited = 0;
        for (int i = 0; i < 300; i++) {
            String token = Base64.getEncoder().encodeToString(("alice:guess-" + i).getBytes(StandardCharsets.UTF_8));
            String authorization = spellings.get(i % spellings.size()) + token;
            // Each guess from another address behind the trusted proxy: only the per-user limit can stop them.
            if (send("X-Forwarded-For: 198.51." + (i / 250) + "." + (i % 250), "Authorization: " + authorization)
                    == 429) {
                limited++;
            }
        }
        assertThat(checked.get()).as("guesses that reached the authentication").isEqualTo(PER_USER);
        assertThat(limited).isEqualTo(300 - PER_USER);
        // The guessed name stays locked for the window, even with the right password, as documented.
        assertThat(send("X-Forwarded-For: 203.0.113.1", "Authorization: " + basic("alice:alice")))
                .isEqualTo(429);
        // Another user is unaffected.
        assertThat(send("X-Forwarded-For: 203.0.113.1", "Authorization: " + basic("bob:bob")))
                .isEqualTo(200);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void hugeAndNonUtf8UserNamesStillCountPerAddress(StoreKind store) throws Exception {
        start(store);
        int reached = 0;
        for (int i = 0; i < 100; i++) {
            byte[] name = new byte[40 + i];
            for (int j = 0; j < name.length; j++) {
                name[j] = (byte) (0x80 + (i * 7 + j) % 0x7f);
            }
            byte[] credentials = new byte[name.length + 2];
            System.arraycopy(name, 0, credentials, 0, name.length);
            credentials[name.length] = ':';
            credentials[name.length + 1] = 'x';
            String value = i % 2 == 0 ? basic(credentials) : basic("u" + i + "x".repeat(3_000 + i) + ":x");
            if (send("X-Forwarded-For: 198.51.100.77", "Authorization: " + value) == 401) {
                reached++;
            }
        }
        assertThat(reached).isEqualTo(PER_ADDRESS);
        assertThat(checked.get()).isEqualTo(PER_ADDRESS);
        // The address's bucket and one for each name that failed (refunded buckets of rejected ones may linger).
        List<byte[]> keys = target.assertRedisKeysWellFormed();
        if (store == StoreKind.REDIS) {
            assertThat(keys.size()).isGreaterThanOrEqualTo(PER_ADDRESS + 1);
        }
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void rightPasswordsDoNotCountAsAttempts(StoreKind store) throws Exception {
        start(store);
        for (int i = 0; i < 60; i++) {
            assertThat(send("Authorization: " + basic("bob:bob")))
                    .as("login %d", i)
                    .isEqualTo(200);
        }
        int reached = 0;
        for (int i = 0; i < 20; i++) {
            if (send("Authorization: " + basic("bob:wrong-" + i)) == 401) {
                reached++;
            }
        }
        assertThat(reached).isEqualTo(PER_USER);
    }
}
