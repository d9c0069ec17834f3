package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.ClientIpResolver.ForwardedHeader;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Attacks the {@code ip} key through forwarding headers, in a real Tomcat, with 127.0.0.1 as the trusted proxy and
 * a rule of 5 requests an hour per client address: up to Tomcat's limit of header lines with client-chosen values
 * in front of the proxy's line, one line near Tomcat's 8 KB header limit with thousands of hops, RFC 7239
 * {@code Forwarded} variants, and odd IP literals in the hop the proxy appended (IPv4-mapped IPv6, zone ids,
 * brackets and ports, case, leading zeros, hex and decimal IPv4, {@code unknown}, {@code _hidden}, empty text,
 * garbage). No request may get a 5xx or no answer, a client must not rotate its identity, spellings of one address
 * share one bucket ({@link ClientIpResolver}'s documentation), and malformed hops fall back to the proxy itself.
 * Every attack runs with the local store and with a real Redis.
 */
class ForwardingHeadersAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final int LIMIT = 5;
    /** Tomcat's default maxHeaderCount; RawHttp adds Host and Connection itself. */
    private static final int TOMCAT_MAX_HEADERS = 100;

    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    private void start(StoreKind store, ForwardedHeader header) throws Exception {
        target = Target.builder(store, redis)
                .clientIp(ClientIpResolver.builder()
                        .trustedProxies("127.0.0.1")
                        .forwardedHeader(header)
                        .build())
                .rule(UrlRule.of(
                        Rule.builder("per-address")
                                .key("ip")
                                .limits(LIMIT + "/1h")
                                .build(),
                        List.of("/**"),
                        Set.of()))
                .start();
    }

    private void start(StoreKind store) throws Exception {
        start(store, ForwardedHeader.X_FORWARDED_FOR);
    }

    private int status(List<String> lines) throws IOException {
        int status = RawHttp.send(target.port(), "GET", "/resource", lines).status();
        assertThat(status).as("status for %s", abbreviate(lines)).isIn(200, 429);
        return status;
    }

    private int admitted(List<List<String>> requests) throws IOException {
        int admitted = 0;
        for (List<String> lines : requests) {
            if (status(lines) == 200) {
                admitted++;
            }
        }
        return admitted;
    }

    private static String abbreviate(Object o) {
        String s = String.valueOf(o);
        return s.length() <= 300 ? s : s.substring(0, 300) + "... (" + s.length() + " chars)";
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void asManyClientLinesAsTomcatAcceptsCannotRotateTheClientsIdentity(StoreKind store) throws Exception {
        start(store);
        List<List<String>> requests = new ArrayList<>();
        for (int request = 0; request < 25; request++) {
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < TOMCAT_MAX_HEADERS - 3; i++) {
                lines.add("X-Forwarded-For: 198.51." + request + "." + i + ", 2001:db8:" + request + "::" + i);
            }
            lines.add("X-Forwarded-For: 203.0.113.9"); // appended by the trusted proxy: the real client
            requests.add(lines);
        }
        assertThat(admitted(requests)).isEqualTo(LIMIT);
        assertThat(target.reachedTotal()).isEqualTo(LIMIT);
        // Another real client behind the same proxy still has a bucket of its own.
        assertThat(status(List.of("X-Forwarded-For: 198.51.100.1, 203.0.113.10")))
                .isEqualTo(200);
        target.assertRedisKeysWellFormed(2);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void moreHeaderLinesThanTomcatAcceptsAreRefusedWithoutReachingTheLimiter(StoreKind store) throws Exception {
        start(store);
        for (int request = 0; request < 10; request++) {
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < 150; i++) {
                lines.add("X-Forwarded-For: 198.51." + request + "." + i);
            }
            lines.add("X-Forwarded-For: 203.0.113.9");
            int status = RawHttp.send(target.port(), "GET", "/resource", lines).status();
            assertThat(status)
                    .as("request %d with 151 forwarding lines", request)
                    .isEqualTo(400);
        }
        assertThat(target.reachedTotal()).isZero();
        assertThat(status(List.of("X-Forwarded-For: 203.0.113.9")))
                .as("no token was spent")
                .isEqualTo(200);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void oneLineNearTomcatsHeaderLimitWithThousandsOfHopsCannotRotateTheClientsIdentity(StoreKind store)
            throws Exception {
        start(store);
        List<List<String>> requests = new ArrayList<>();
        for (int request = 0; request < 15; request++) {
            StringBuilder line = new StringBuilder("X-Forwarded-For: ");
            // "::" is a valid address (unspecified IPv6): 2,400 hops of 3 characters, plus a rotating one.
            line.append("::,".repeat(2_400))
                    .append("198.51.100.")
                    .append(request)
                    .append(", 203.0.113.9");
            assertThat(line.length()).isBetween(7_000, 7_900);
            requests.add(List.of(line.toString()));
        }
        long started = System.nanoTime();
        assertThat(admitted(requests)).isEqualTo(LIMIT);
        assertThat(System.nanoTime() - started)
                .as("15 requests with 2,400 hops each, nanoseconds")
                .isLessThan(10_000_000_000L);
        // A line that is all trusted proxies, thousands of times, ends at the leftmost: still 127.0.0.1, bounded.
        List<List<String>> allTrusted = new ArrayList<>();
        for (int request = 0; request < 10; request++) {
            allTrusted.add(List.of("X-Forwarded-For: " + "127.0.0.1,".repeat(700) + "127.0.0.1"));
        }
        assertThat(admitted(allTrusted)).isEqualTo(LIMIT);
        target.assertRedisKeysWellFormed(2);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void aLineBeyondTomcatsHeaderLimitIsRefusedNotFailed(StoreKind store) throws Exception {
        start(store);
        String line = "X-Forwarded-For: " + "198.51.100.1,".repeat(1_000) + "203.0.113.9";
        for (int i = 0; i < 5; i++) {
            int status = RawHttp.send(target.port(), "GET", "/resource", List.of(line))
                    .status();
            assertThat(status).as("a 13 KB forwarding header").isEqualTo(400);
        }
        assertThat(target.reachedTotal()).isZero();
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void spellingsOfOneIpv4AddressShareOneBucket(StoreKind store) throws Exception {
        start(store);
        List<String> spellings = List.of(
                "203.0.113.7",
                "203.0.113.7:8080",
                " 203.0.113.7 ",
                "::ffff:203.0.113.7",
                "::FFFF:203.0.113.7",
                "[::ffff:203.0.113.7]",
                "[::ffff:203.0.113.7]:443",
                "0:0:0:0:0:ffff:203.0.113.7",
                "::ffff:cb00:7107",
                "0000:0000:0000:0000:0000:FFFF:CB00:7107",
                "203.0.113.7:_obfuscated");
        List<List<String>> requests = new ArrayList<>();
        for (String spelling : spellings) {
            requests.add(List.of("X-Forwarded-For: 198.51.100." + requests.size() + "," + spelling));
        }
        assertThat(admitted(requests)).as("admissions of %s", spellings).isEqualTo(LIMIT);
        target.assertRedisKeysWellFormed(1);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void spellingsOfOneIpv6NetworkShareOneBucketAndOtherNetworksHaveTheirOwn(StoreKind store) throws Exception {
        start(store);
        List<String> spellings = List.of(
                "2001:db8:1:2::1",
                "2001:DB8:1:2::1",
                "2001:0db8:0001:0002:0000:0000:0000:0001",
                "[2001:db8:1:2::1]",
                "[2001:db8:1:2::1]:8080",
                "2001:db8:1:2::ffff",
                "2001:db8:1:2:aaaa:bbbb:cccc:dddd",
                "2001:db8:1:2::1%eth0",
                "[2001:db8:1:2::1%25en0]:80");
        List<List<String>> requests = new ArrayList<>();
        for (String spelling : spellings) {
            requests.add(List.of("X-Forwarded-For: 198.51.100." + requests.size() + ", " + spelling));
        }
        assertThat(admitted(requests)).as("admissions of %s", spellings).isEqualTo(LIMIT);
        // Link-local with zone ids: one /64, whatever the zone.
        List<List<String>> linkLocal = new ArrayList<>();
        for (String spelling : List.of(
                "fe80::1%eth0",
                "FE80::1", "[fe80::1%eth0]:80", "fe80::2%lo", "fe80::1%25x", "fe80:0:0:0::9", "[fe80::1]")) {
            linkLocal.add(List.of("X-Forwarded-For: " + spelling));
        }
        assertThat(admitted(linkLocal)).isEqualTo(LIMIT);
        // A neighbouring /64 is another subscriber.
        assertThat(status(List.of("X-Forwarded-For: 2001:db8:1:3::1"))).isEqualTo(200);
        target.assertRedisKeysWellFormed(3);
    }

    /** Hops that name no address in the strict syntax: the walk stops and the trusted peer is the client. */
    private static final List<String> MALFORMED = List.of(
            "0x7f.0.0.1",
            "2130706433",
            "017.0.0.1",
            "127.1",
            "203.000.113.007",
            "0203.0.113.7",
            "0xcb.0x00.0x71.0x07",
            "unknown",
            "UNKNOWN",
            "_hidden",
            "",
            "   ",
            "garbage",
            "localhost",
            "example.com",
            "256.1.1.1",
            "1.2.3.4.5",
            "1.2.3",
            "[203.0.113.7]",
            "[203.0.113.7]:80",
            "203.0.113.7:99999",
            "203.0.113.7:",
            "203.0.113.7:-1",
            "fe80::1%",
            "2001:db8::1::1",
            "::ffff:1.2.3",
            "[2001:db8::1",
            "2001:db8::1]",
            "[2001:db8::1]:x",
            "1.2.3.4/24",
            "\"203.0.113.7\"",
            "2001:db8:::1",
            "12345::1",
            "g::1",
            "%eth0",
            "::ffff:256.0.0.1",
            "\u00e9",
            "1.2.3.4 5.6.7.8",
            "x".repeat(300),
            " ".repeat(300) + "203.0.113.7",
            "::" + ":0".repeat(200));

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void malformedHopsFromTheProxyFallBackToTheProxyAndCannotRotateTheKey(StoreKind store) throws Exception {
        start(store);
        List<List<String>> requests = new ArrayList<>();
        for (String hop : MALFORMED) {
            // A rotating address of the client's own to the left of the malformed hop must not be believed.
            requests.add(List.of("X-Forwarded-For: 198.51.100." + requests.size() + ", " + hop));
        }
        assertThat(admitted(requests))
                .as("admissions of %d malformed hops", MALFORMED.size())
                .isEqualTo(LIMIT);
        // They all counted against the proxy's own address: a request without the header finds that bucket empty.
        assertThat(status(List.of())).isEqualTo(429);
        // A well-formed client is unaffected.
        assertThat(status(List.of("X-Forwarded-For: 203.0.113.20"))).isEqualTo(200);
        target.assertRedisKeysWellFormed(2);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void forwardedHeaderSpellingsOfOneClientShareOneBucketAndRotatingElementsAreIgnored(StoreKind store)
            throws Exception {
        start(store, ForwardedHeader.FORWARDED);
        List<String> spellings = List.of(
                "for=203.0.113.9",
                "For=203.0.113.9",
                "FOR=\"203.0.113.9\"",
                "for=\"203.0.113.9:4711\"",
                "for=\"[::ffff:203.0.113.9]:4711\"",
                "proto=https;for=203.0.113.9;by=_proxy",
                " for = 203.0.113.9 ; host=example.com",
                "for=\"\\203.0.113.9\"");
        List<List<String>> requests = new ArrayList<>();
        for (String element : spellings) {
            // The client's own elements (and an X-Forwarded-For of its own, which this configuration never reads)
            // precede the element the proxy appended.
            requests.add(List.of(
                    "Forwarded: for=198.51.100." + requests.size() + ";proto=http, for=\"[2001:db8::" + requests.size()
                            + "]\"",
                    "X-Forwarded-For: 192.0.2." + requests.size(),
                    "Forwarded: " + element));
        }
        assertThat(admitted(requests)).as("admissions of %s", spellings).isEqualTo(LIMIT);
        // IPv6 in Forwarded: quoted and bracketed, with a port.
        assertThat(status(List.of("Forwarded: for=\"[2001:db8:cafe::17]:4711\"")))
                .isEqualTo(200);
        target.assertRedisKeysWellFormed(2);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void malformedForwardedElementsFallBackToTheProxy(StoreKind store) throws Exception {
        start(store, ForwardedHeader.FORWARDED);
        List<String> malformed = List.of(
                "for=unknown",
                "for=_hidden",
                "for=\"203.0.113.9",
                "for=203.0.113.9\"",
                "for=203.0.113.9;for=198.51.100.1",
                "proto=https",
                "by=203.0.113.9",
                "for=",
                "for=\"\"",
                "for=\"[2001:db8::1]:99999\"",
                "for=\"203.0.113.9;x\"",
                "for=\"a,b\"",
                "for=203.0.113.9:80:80",
                "for=" + "9".repeat(2_000),
                ";;;;;;",
                "=,=,=",
                "for=\"\\\"",
                "\u00ff=\u00ff",
                "for=\"203.0.113.9\\\"",
                "203.0.113.9");
        List<List<String>> requests = new ArrayList<>();
        for (String element : malformed) {
            requests.add(List.of("Forwarded: for=198.51.100." + requests.size() + ", " + element));
        }
        assertThat(admitted(requests)).as("admissions of %s", malformed).isEqualTo(LIMIT);
        assertThat(status(List.of("Forwarded: for=203.0.113.30"))).isEqualTo(200);
        target.assertRedisKeysWellFormed(2);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void forwardingHeadersFromAnUntrustedPeerAreIgnoredWhateverTheySay(StoreKind store) throws Exception {
        target = Target.builder(store, redis)
                .clientIp(ClientIpResolver.builder()
                        .trustedProxies("10.0.0.0/8", "192.0.2.1")
                        .build())
                .rule(UrlRule.of(
                        Rule.builder("per-address")
                                .key("ip")
                                .limits(LIMIT + "/1h")
                                .build(),
                        List.of("/**"),
                        Set.of()))
                .start();
        List<List<String>> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            requests.add(List.of(
                    "X-Forwarded-For: 203.0.113." + i,
                    "X-Forwarded-For: 10.0.0." + i,
                    "Forwarded: for=198.51.100." + i,
                    "X-Real-IP: 198.51.100." + i));
        }
        assertThat(admitted(requests)).isEqualTo(LIMIT);
        target.assertRedisKeysWellFormed(1);
    }
}
