package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Rule;
import io.github.ratelimit.Rule.Counted;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A seeded random fuzzer against the filter in a real Tomcat with every kind of key ({@code ip} behind a trusted
 * proxy, a header, {@code user|header}, a parameter, {@code basic-user} counting failures, a GET-only rule): a few
 * hundred requests per store, eight at a time, built from random methods, targets, header names and values (now and
 * then with bytes a request may not contain), and some entirely random byte strings. No response may be a 5xx; no
 * answer at all is acceptable only for bytes that are not a well-formed request; every socket has a timeout, so a hang
 * fails the test instead of blocking it; afterwards a normal request is still served at once. The seed is printed and
 * in every failure message; rerun one with {@code -Dadversarial.seed=<seed>}. With the local store and Redis.
 */
class RandomBytesFuzzTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final int REQUESTS = Integer.getInteger("adversarial.requests", 320);
    private static final int SOCKET_TIMEOUT_MILLIS = 10_000;

    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    private void start(StoreKind store) throws Exception {
        target = Target.builder(store, redis)
                .clientIp(ClientIpResolver.builder().trustedProxies("127.0.0.1").build())
                .rule(UrlRule.of(
                        Rule.builder("by-ip").key("ip").limits("200/1h").build(), List.of("/**"), Set.of()))
                .rule(UrlRule.of(
                        Rule.builder("by-api-key")
                                .key("header:X-Api-Key")
                                .limits("3/1h")
                                .onMissingKey(MissingKeyPolicy.SHARED)
                                .build(),
                        List.of("/api/**"),
                        Set.of()))
                .rule(UrlRule.of(
                        Rule.builder("by-client")
                                .key("user|header:X-Client")
                                .limits("3/1h")
                                .build(),
                        List.of("/alt/**"),
                        Set.of()))
                .rule(UrlRule.of(
                        Rule.builder("by-query")
                                .key("param:q")
                                .limits("3/1h")
                                .onMissingKey(MissingKeyPolicy.SKIP)
                                .build(),
                        List.of("/search/**"),
                        Set.of()))
                .rule(UrlRule.of(
                        Rule.builder("by-basic-user")
                                .key("basic-user")
                                .limits("3/1h")
                                .count(Counted.FAILURES)
                                .onMissingKey(MissingKeyPolicy.SKIP)
                                .build(),
                        List.of("/login/**"),
                        Set.of()))
                .rule(UrlRule.of(
                        Rule.builder("get-only")
                                .key("header:X-Forwarded-For")
                                .limits("5/1h")
                                .onMissingKey(MissingKeyPolicy.SKIP)
                                .build(),
                        List.of("/get/**"),
                        Set.of("GET")))
                .start();
    }

    /** One request of the barrage: its bytes, and whether they are a well-formed HTTP/1.1 request. */
    private record Attack(byte[] bytes, boolean wellFormed, String description) {}

    private static final String[] METHODS = {
        "GET",
        "HEAD",
        "POST",
        "PUT",
        "DELETE",
        "PATCH",
        "OPTIONS",
        "get",
        "Post",
        "PROPFIND",
        "MKCOL",
        "BREW",
        "X",
        "QUERY"
    };
    private static final String[] PATHS = {
        "/",
        "/api",
        "/api/",
        "/api/x",
        "/alt/y",
        "/search",
        "/search/z",
        "/login",
        "/login/me",
        "/get/a",
        "/get/../api/x",
        "/api/%2e%2e/get",
        "/api;jsessionid=1",
        "/a//b",
        "/%7Bx%7D",
        "/%25",
        "/%00",
        "/%C0%AE",
        "/%E2%82%AC",
        "/api/x?q=1",
        "/search/?q=%7B%7D&q=2",
        "/search?q=%zz",
        "/search?q=" + "y".repeat(600),
        "/login?x=%FF",
        "*",
        "/;",
        "/api/..;/get"
    };
    private static final String[] HEADER_NAMES = {
        "X-Forwarded-For",
        "X-Forwarded-For",
        "Forwarded",
        "X-Api-Key",
        "X-Client",
        "Authorization",
        "Cookie",
        "Accept",
        "X-Real-IP",
        "User-Agent",
        "Content-Type",
        "Referer",
        "X-Test",
        "x-api-key",
        "X-FORWARDED-FOR"
    };
    private static final String[] VALUES = {
        "203.0.113.7",
        "198.51.100.1, 127.0.0.1",
        "::ffff:127.0.0.1",
        "unknown",
        "for=_hidden",
        "Basic YWxpY2U6eA==",
        "Basic !!!",
        "Basic " + "QUFB".repeat(300),
        "{x}",
        "%7B",
        "a:b",
        "\\+~",
        "",
        " ",
        "\u00ff\u00fe",
        "user=alice",
        "0x7f.0.0.1",
        "[::1]:80",
        "fe80::1%eth0"
    };

    private static Attack next(Random random) {
        int kind = random.nextInt(100);
        if (kind < 12) {
            byte[] garbage = new byte[1 + random.nextInt(2_000)];
            random.nextBytes(garbage);
            return new Attack(garbage, false, "random bytes");
        }
        StringBuilder head = new StringBuilder();
        boolean wellFormed = true;
        if (kind < 20) {
            head.append("GET /api/x HTTP/1.1\r\nHost: 127.0.0.1\r\n");
            byte[] garbage = new byte[1 + random.nextInt(1_000)];
            random.nextBytes(garbage);
            head.append(new String(garbage, StandardCharsets.ISO_8859_1));
            return new Attack(
                    head.toString().getBytes(StandardCharsets.ISO_8859_1), false, "request line then random bytes");
        }
        String method = random.nextInt(10) == 0
                ? randomToken(random, 1 + random.nextInt(60))
                : METHODS[random.nextInt(METHODS.length)];
        String path = PATHS[random.nextInt(PATHS.length)];
        if (random.nextInt(5) == 0) {
            path = path + (path.endsWith("/") ? "" : "/") + randomPathSegment(random);
        }
        head.append(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        int lines = random.nextInt(25);
        for (int i = 0; i < lines; i++) {
            String name = random.nextInt(8) == 0
                    ? randomToken(random, 1 + random.nextInt(30))
                    : HEADER_NAMES[random.nextInt(HEADER_NAMES.length)];
            String value;
            switch (random.nextInt(4)) {
                case 0 -> value = VALUES[random.nextInt(VALUES.length)];
                case 1 -> value = randomIp(random);
                case 2 -> value = randomText(random, random.nextInt(300), 0x20, 0xff);
                default -> {
                    StringBuilder hops = new StringBuilder();
                    int n = 1 + random.nextInt(200);
                    for (int h = 0; h < n; h++) {
                        hops.append(h == 0 ? "" : ", ")
                                .append(
                                        random.nextBoolean()
                                                ? randomIp(random)
                                                : VALUES[random.nextInt(VALUES.length)]);
                    }
                    value = hops.toString();
                }
            }
            if (random.nextInt(40) == 0) {
                // A byte no header value may contain.
                int at = value.isEmpty() ? 0 : random.nextInt(value.length());
                char bad = (char) new int[] {0, 1, '\r', '\n', 0x7f, 0x1b}[random.nextInt(6)];
                value = value.substring(0, at) + bad + value.substring(at);
                wellFormed = false;
            }
            head.append(name).append(": ").append(value).append("\r\n");
        }
        byte[] body = new byte[0];
        if (random.nextInt(4) == 0) {
            body = random.nextBoolean()
                    ? ("q=" + randomToken(random, 20) + "&username=alice&password=x")
                            .getBytes(StandardCharsets.ISO_8859_1)
                    : new byte[random.nextInt(500)];
            if (body.length > 0 && body[0] == 0) {
                random.nextBytes(body);
            }
            head.append("Content-Type: application/x-www-form-urlencoded\r\n");
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] all = new byte[headBytes.length + body.length];
        System.arraycopy(headBytes, 0, all, 0, headBytes.length);
        System.arraycopy(body, 0, all, headBytes.length, body.length);
        if (headBytes.length > 8_000) {
            wellFormed = false; // over Tomcat's head limit: refused with 400 (or the connection closed)
        }
        return new Attack(all, wellFormed, method.length() > 30 ? method.substring(0, 30) + "..." : method);
    }

    private static final String TOKEN_CHARS =
            "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    private static String randomToken(Random random, int length) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < length; i++) {
            sb.append(TOKEN_CHARS.charAt(random.nextInt(TOKEN_CHARS.length())));
        }
        return sb.toString();
    }

    private static String randomText(Random random, int length, int from, int to) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < length; i++) {
            char c = (char) (from + random.nextInt(to - from + 1));
            sb.append(c == 0x7f ? 'x' : c);
        }
        return sb.toString().strip();
    }

    private static String randomPathSegment(Random random) {
        StringBuilder sb = new StringBuilder();
        int n = random.nextInt(40);
        for (int i = 0; i < n; i++) {
            sb.append(
                    random.nextInt(3) == 0
                            ? String.format("%%%02X", random.nextInt(256))
                            : String.valueOf(TOKEN_CHARS.charAt(random.nextInt(TOKEN_CHARS.length()))));
        }
        return sb.toString();
    }

    private static String randomIp(Random random) {
        return switch (random.nextInt(4)) {
            case 0 ->
                random.nextInt(256) + "." + random.nextInt(256) + "." + random.nextInt(256) + "." + random.nextInt(256);
            case 1 -> String.format("%x:%x::%x", random.nextInt(65536), random.nextInt(65536), random.nextInt(65536));
            case 2 -> "[" + String.format("2001:db8::%x", random.nextInt(65536)) + "]:" + random.nextInt(70_000);
            default -> "::ffff:" + random.nextInt(256) + "." + random.nextInt(256) + ".0." + random.nextInt(300);
        };
    }

    /**
     * Sends bytes and reads the answer until the server closes the connection.
     *
     * @return the status, or 0 when the server closed the connection without an answer
     * @throws SocketTimeoutException when the server neither answers nor closes in time: a hang
     */
    private static int sendRaw(int port, byte[] bytes, boolean endInput) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), SOCKET_TIMEOUT_MILLIS);
            socket.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
            try {
                socket.getOutputStream().write(bytes);
                socket.getOutputStream().flush();
                if (endInput) {
                    socket.shutdownOutput(); // garbage ends here: the server must not wait for more
                }
            } catch (SocketException e) {
                // The server may refuse the rest of a bad request and close; its answer is still readable.
            }
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            try {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    response.write(buffer, 0, n);
                }
            } catch (SocketException e) {
                // A reset after the answer: what was read counts.
            }
            String text = response.toString(StandardCharsets.ISO_8859_1);
            if (!text.startsWith("HTTP/1.1 ") || text.length() < 12) {
                return 0;
            }
            return Integer.parseInt(text.substring(9, 12));
        }
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void randomRequestsAndBytesNeverGetA5xxNorHangTheServer(StoreKind store) throws Exception {
        long seed = Long.getLong("adversarial.seed", new SecureRandom().nextLong()) ^ store.ordinal();
        System.out.println("RandomBytesFuzzTest " + store + ": seed " + seed + " (rerun with -Dadversarial.seed="
                + (seed ^ store.ordinal()) + ")");
        start(store);
        Random random = new Random(seed);
        List<Attack> attacks = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            attacks.add(next(random));
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> statuses = new ArrayList<>();
            for (Attack attack : attacks) {
                statuses.add(pool.submit(() -> sendRaw(target.port(), attack.bytes(), !attack.wellFormed())));
            }
            for (int i = 0; i < attacks.size(); i++) {
                Attack attack = attacks.get(i);
                String what = "seed " + seed + ", request " + i + " (" + attack.description() + "): "
                        + printable(attack.bytes());
                int status;
                try {
                    status = statuses.get(i).get(60, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new AssertionError("no answer in time or a broken connection for " + what, e.getCause());
                }
                if (attack.wellFormed()) {
                    assertThat(status).as(what).isBetween(200, 499);
                } else {
                    assertThat(status)
                            .as(what)
                            .satisfiesAnyOf(
                                    s -> assertThat(s).isZero(),
                                    s -> assertThat(s).isBetween(200, 499));
                }
            }
        } finally {
            pool.shutdownNow();
        }
        // Still serving, promptly: no exhausted threads, no stuck connection.
        for (int i = 0; i < 10; i++) {
            long started = System.nanoTime();
            byte[] normal = ("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 192.0.2." + i
                            + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            assertThat(sendRaw(target.port(), normal, false))
                    .as("seed %d: a normal request after the barrage", seed)
                    .isEqualTo(200);
            assertThat(System.nanoTime() - started)
                    .as("seed %d: nanoseconds for a normal request", seed)
                    .isLessThan(5_000_000_000L);
        }
        target.assertRedisKeysWellFormed();
    }

    private static String printable(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(bytes.length, 400); i++) {
            int b = bytes[i] & 0xff;
            sb.append(b >= 0x20 && b < 0x7f ? String.valueOf((char) b) : String.format("\\x%02x", b));
        }
        return sb + (bytes.length > 400 ? "... (" + bytes.length + " bytes)" : "");
    }
}
