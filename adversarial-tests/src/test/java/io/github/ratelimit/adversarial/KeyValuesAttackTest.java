package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Attacks keys built from what clients send: header values ({@code header:X-Api-Key}) and query parameters
 * ({@code param:k}) with the characters the key text and the Redis key use ({@code :}, braces, {@code %} and
 * percent-encodings of braces, {@code \ + ~ = |}), tabs, bytes 0x80 to 0xFF (ISO-8859-1 text and raw UTF-8
 * bytes), 10 KB values and values that pose as a hashed key, and NUL, bare CR and bare LF inside a header value.
 * Each rule allows one request an hour per key: every distinct value's first request must pass (a bucket of its
 * own) and its second must not. Nothing may answer 5xx. With Redis, every key written must carry the prefix,
 * exactly one hash tag and a TTL.
 */
class KeyValuesAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private Target target;
    private int buckets;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    private void start(StoreKind store) throws Exception {
        target = Target.builder(store, redis)
                .rule(UrlRule.of(
                        Rule.builder("by-api-key")
                                .key("header:X-Api-Key")
                                .limits("1/1h")
                                .build(),
                        List.of("/h/**"),
                        Set.of()))
                .rule(UrlRule.of(
                        Rule.builder("by-param").key("param:k").limits("1/1h").build(), List.of("/p/**"), Set.of()))
                // Room for 10 KB values (Tomcat's default is 8 KB for the whole head).
                .tomcat(t -> t.getConnector().setProperty("maxHttpHeaderSize", "65536"))
                .start();
    }

    private int headerRequest(String value) throws IOException {
        // RawHttp writes each char as one byte (ISO-8859-1), so the value goes on the wire exactly as given.
        return RawHttp.send(target.port(), "GET", "/h/x", "X-Api-Key: " + value).status();
    }

    /** A value the container accepts: its first request passes, the second is rejected. */
    private void assertOwnBucket(String value) throws IOException {
        String shown = show(value);
        assertThat(headerRequest(value))
                .as("first request with X-Api-Key %s", shown)
                .isEqualTo(200);
        assertThat(headerRequest(value))
                .as("second request with X-Api-Key %s", shown)
                .isEqualTo(429);
        buckets++;
    }

    private static String show(String value) {
        StringBuilder sb = new StringBuilder();
        for (char c : (value.length() > 60 ? value.substring(0, 60) : value).toCharArray()) {
            sb.append(c < 0x20 || c > 0x7e ? String.format("\\x%02x", (int) c) : String.valueOf(c));
        }
        return "'" + sb + "'" + (value.length() > 60 ? " (" + value.length() + " chars)" : "");
    }

    private static String isoBytes(int from, int to) {
        StringBuilder sb = new StringBuilder();
        for (int b = from; b <= to; b++) {
            sb.append((char) b);
        }
        return sb.toString();
    }

    /** The UTF-8 bytes of text, each as one ISO-8859-1 char: how raw UTF-8 reaches Tomcat's header decoding. */
    private static String rawUtf8(String text) {
        return new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    static final List<String> TRICKY = List.of(
            "a:b",
            "a::b",
            ":",
            "::",
            "by-api-key:a",
            "{",
            "}",
            "{}",
            "}{",
            "{a}",
            "a{b}c",
            "{{}}",
            "%",
            "%%",
            "%7B",
            "%7b",
            "%7D",
            "%7Bx%7D",
            "{x}",
            "%25",
            "%257B",
            "%3A",
            "a%3Ab",
            "\\",
            "\\\\",
            "\\+",
            "+",
            "++",
            "a+b",
            "a\\+b",
            "~",
            "\\~",
            "~missing",
            "\\~missing",
            "~sha256:00",
            "=",
            "user=alice",
            "header:X-Client=alice",
            "|",
            "a|b",
            "*",
            "global",
            "a\tb",
            "a \t b",
            "\"quoted\"",
            "'",
            "<script>",
            "null",
            "0",
            "-1",
            "%00",
            "\u00e9",
            rawUtf8("\u00e9"),
            "\u00ff",
            rawUtf8("\u00ff"),
            isoBytes(0x80, 0xff),
            rawUtf8("\u20ac"),
            rawUtf8("\ud83d\ude00"),
            rawUtf8("\u0430lice"),
            rawUtf8("\uFEFFalice"),
            "alice",
            "ALICE",
            "alice.");

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void everyTrickyHeaderValueHasABucketOfItsOwn(StoreKind store) throws Exception {
        start(store);
        assertThat(TRICKY).doesNotHaveDuplicates();
        for (String value : TRICKY) {
            assertOwnBucket(value);
        }
        // None of them was reset or taken over by a later one.
        for (String value : TRICKY) {
            assertThat(headerRequest(value))
                    .as("X-Api-Key %s again", show(value))
                    .isEqualTo(429);
        }
        target.assertRedisKeysWellFormed(buckets);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void tenKilobyteValuesAreHashedWithoutCollidingAndCannotBeImpersonatedByTheirHash(StoreKind store)
            throws Exception {
        start(store);
        String base = "k".repeat(10 * 1024);
        List<String> values = List.of(
                base,
                base.substring(1) + "j",
                "j" + base.substring(1),
                base.substring(0, 5000) + "j" + base.substring(5001),
                "{".repeat(10 * 1024),
                "}".repeat(10 * 1024),
                "%".repeat(10 * 1024),
                "+".repeat(10 * 1024),
                "~".repeat(10 * 1024),
                isoBytes(0x80, 0xff).repeat(80),
                "k".repeat(128),
                "k".repeat(129),
                "+".repeat(64),
                "+".repeat(65));
        for (String value : values) {
            assertOwnBucket(value);
        }
        // A client sending the hash text of another client's long key gets its own bucket, not that one.
        assertOwnBucket("~sha256:" + sha256(base));
        assertOwnBucket("\\~sha256:" + sha256(base));
        target.assertRedisKeysWellFormed(buckets);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void controlBytesInAHeaderValueAreRefusedOrKeptApartButNeverFail(StoreKind store) throws Exception {
        start(store);
        // ("a\r\n b" is an obsolete line fold, which RFC 9112 lets a server read as a space: not a control byte.)
        List<String> values = List.of(
                "a\u0000b",
                "\u0000",
                "a\rb",
                "a\nb",
                "a\r\nb",
                "a\r\n\u0000",
                "\r",
                "a\u0001b",
                "a\u001fb",
                "a\u007fb",
                "a\u0000",
                "\u0000a",
                "\u0000".repeat(1000),
                "\u0000\r\n");
        for (String value : values) {
            int first = headerRequest(value);
            int second = headerRequest(value);
            assertThat(first).as("first request with X-Api-Key %s", show(value)).isIn(200, 400);
            if (first == 200) {
                assertThat(second)
                        .as("second request with X-Api-Key %s", show(value))
                        .isEqualTo(429);
                buckets++;
            } else {
                assertThat(second)
                        .as("second request with X-Api-Key %s", show(value))
                        .isEqualTo(400);
            }
        }
        // A bare LF right after the colon ends the line: an empty value, which is no key (rejected, not shared).
        assertThat(headerRequest("\n")).as("an empty X-Api-Key").isEqualTo(429);
        // An obsolete line fold: RFC 9112 lets a server read it as a space. Whatever Tomcat makes of it, no 5xx.
        int folded = headerRequest("x\r\n y");
        assertThat(folded).as("an obs-fold").isIn(200, 400);
        if (folded == 200) {
            assertThat(headerRequest("x\r\n y")).as("an obs-fold again").isEqualTo(429);
            buckets++;
        }
        // The values around the control bytes are still unused: nothing above shared their buckets.
        for (String value : List.of("a", "b", "ab", "a b")) {
            assertOwnBucket(value);
        }
        target.assertRedisKeysWellFormed(buckets);
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void trickyQueryParametersHaveBucketsOfTheirOwnAndBadEncodingsNeverFail(StoreKind store) throws Exception {
        start(store);
        List<String> queries = List.of(
                "k=a%3Ab",
                "k=%7B%7D",
                "k=%7B",
                "k=%257B",
                "k=%25",
                "k=%2525",
                "k=a%2Bb",
                "k=a%5C%2Bb",
                "k=%7E",
                "k=%7Emissing",
                "k=a%0D%0Ab",
                "k=%E2%82%AC",
                "k=%F0%9F%98%80",
                "k=%C3%A9",
                "k=" + "%7B".repeat(500),
                "k=" + "x".repeat(500),
                "k=first&k=second",
                "k=%3D&other=1",
                "k=a%00b",
                "k=%00a",
                "k=%09a%09b");
        for (String query : queries) {
            String path = "/p/x?" + query;
            assertThat(RawHttp.send(target.port(), "GET", path).status())
                    .as("first GET %s", path)
                    .isEqualTo(200);
            assertThat(RawHttp.send(target.port(), "GET", path).status())
                    .as("second GET %s", path)
                    .isEqualTo(429);
            buckets++;
        }
        // Blank values are no key (the rule rejects calls without one), however they are spelled.
        for (String query : List.of("k=", "k", "k=%20", "k=%00", "k=%09%0D%0A", "k=%01%1F", "=x", "&&&", "k=+")) {
            String path = "/p/x?" + query;
            assertThat(RawHttp.send(target.port(), "GET", path).status())
                    .as("GET %s", path)
                    .isEqualTo(429);
        }
        // Malformed encodings (Tomcat refuses to decode them: the key is missing): never a 5xx.
        for (String query : List.of("k=%E9", "k=%zz", "k=%", "k=%C3", "k=%FF%FE", "k=%ED%A0%80", "k=%%%", "k=%u0041")) {
            String path = "/p/y?" + query;
            int first = RawHttp.send(target.port(), "GET", path).status();
            int second = RawHttp.send(target.port(), "GET", path).status();
            assertThat(first).as("first GET %s", path).isIn(200, 400, 429);
            assertThat(second).as("second GET %s", path).isIn(400, 429);
        }
        assertThat(RawHttp.send(target.port(), "GET", "/p/x?k=first").status())
                .as("the first value counted")
                .isEqualTo(429);
        assertThat(RawHttp.send(target.port(), "GET", "/p/x?k=second").status())
                .as("not the second")
                .isEqualTo(200);
        target.assertRedisKeysWellFormed(buckets + 1);
    }
}
