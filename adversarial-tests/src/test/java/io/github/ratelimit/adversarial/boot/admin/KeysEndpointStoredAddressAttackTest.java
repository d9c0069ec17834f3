package io.github.ratelimit.adversarial.boot.admin;

import static io.github.ratelimit.adversarial.boot.admin.AdminApp.body;
import static io.github.ratelimit.adversarial.boot.admin.AdminApp.json;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * The {@code ratelimitkeys} endpoint of a Spring Boot application over real HTTP, attacked through the addressing of
 * the last change: {@code ~stored:} addresses of entries written straight into Redis under huge fields, and a reset
 * through the {@code ~b64:} address of a key whose text starts like a {@code ~stored:} address.
 */
class KeysEndpointStoredAddressAttackTest {

    @RegisterExtension
    static final AdminApp APP = new AdminApp();

    private static String b64(String key) {
        return "~b64:" + Base64.getUrlEncoder().withoutPadding().encodeToString(key.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] ruleKey(String rule) {
        return APP.ruleKey(rule).getBytes(StandardCharsets.UTF_8);
    }

    /** The audit log of the limits, in this JVM, where the application logs through Logback. */
    private static final class Audit implements AutoCloseable {
        private final ch.qos.logback.classic.Logger logger =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("io.github.ratelimit.limits");
        private final ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender =
                new ch.qos.logback.core.read.ListAppender<>();

        Audit() {
            appender.start();
            logger.addAppender(appender);
        }

        List<String> messages() {
            synchronized (appender.list) {
                return appender.list.stream()
                        .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                        .toList();
            }
        }

        @Override
        public void close() {
            logger.detachAppender(appender);
        }
    }

    /**
     * The key {@code ~stored:YWxpY2U}, literally, reset through its {@code ~b64:} address in the JSON body: the answer
     * names that key, not {@code alice}.
     */
    @Test
    void aResetIsAnsweredWithTheKeyItReset() throws Exception {
        String literal = "~stored:YWxpY2U";
        HttpResponse<String> reset = APP.admin("POST", "/by-client", body("key", b64(literal), "reset", true));

        assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
        assertThat(json(reset).path("key").asString())
                .as("the key the answer names: %s", reset.body())
                .isEqualTo(literal);
    }

    /**
     * The key {@code ~stored:!!} is set through its {@code ~b64:} address (200), then reset through it: the reset is
     * applied (the audit log says so), and answered 200, not 400 as bad input.
     */
    @Test
    void aResetThatWasAppliedIsNotAnsweredAsBadInput() throws Exception {
        String address = b64("~stored:!!");
        HttpResponse<String> set = APP.admin("POST", "/by-client", body("key", address, "limits", "5/1s"));
        assertThat(set.statusCode())
                .as("a set of that very key: %s", set.body())
                .isEqualTo(200);
        try (Audit audit = new Audit()) {
            HttpResponse<String> reset = APP.admin("POST", "/by-client", body("key", address, "reset", true));

            assertThat(audit.messages()).as("the reset was applied").anyMatch(m -> m.contains("reset by 'admin'"));
            assertThat(reset.statusCode())
                    .as("the answer to a reset that was applied: %s", reset.body())
                    .isEqualTo(200);
        }
    }

    /**
     * An entry under a 2,000-byte field is removed by its listed {@code ~stored:} address in the path; one under a
     * 10,000-byte field, whose address no request line could carry (the server's 8 KB header limit), is removed by the
     * listing that finds it, so no listed entry is out of reach.
     */
    @Test
    void everyListedEntryIsRemovableAndOnesNoAddressCouldCarryAreRepaired() throws Exception {
        byte[] longest = "y".repeat(2_000).getBytes(StandardCharsets.UTF_8);
        byte[] tooLong = "w".repeat(10_000).getBytes(StandardCharsets.UTF_8);
        APP.jedis.hset(ruleKey("log"), longest, "limits\t5/1m\tmallory\t1".getBytes(StandardCharsets.UTF_8));
        APP.jedis.hset(ruleKey("log"), tooLong, "limits\t5/1m\tmallory\t1".getBytes(StandardCharsets.UTF_8));
        String address = null;
        for (JsonNode e : json(APP.admin("GET", "/log?count=1000", null)).path("entries")) {
            assertThat(e.path("address").asString()).as("not listed").doesNotStartWith("~stored:d3d3");
            if (e.path("address").asString().startsWith("~stored:eXl5")) {
                address = e.path("address").asString();
            }
        }
        assertThat(APP.jedis.hexists(ruleKey("log"), tooLong))
                .as("repaired by the listing")
                .isFalse();
        assertThat(address).as("the listed address").isNotNull();

        HttpResponse<String> byPath = APP.admin("DELETE", "/log/" + address, null);

        assertThat(byPath.statusCode()).as(byPath.body()).isEqualTo(200);
        assertThat(APP.jedis.hexists(ruleKey("log"), longest))
                .as("removed by its address")
                .isFalse();
    }

    /**
     * Four entries under 1 MB fields (of U+0001, which JSON writes as six characters): shown in full with their
     * addresses they would make a page of about 29 MB (of 1,000 entries, about 7 GB); the listing gives a small answer.
     */
    @Test
    void entriesUnderHugeFieldsGiveABoundedListing() throws Exception {
        for (int i = 0; i < 4; i++) {
            byte[] field = new byte[1 << 20];
            Arrays.fill(field, (byte) 1);
            field[0] = (byte) ('a' + i);
            APP.jedis.hset(ruleKey("by-address"), field, "limits\t5/1s\tmallory\t1".getBytes(StandardCharsets.UTF_8));
        }
        HttpResponse<String> page = APP.admin("GET", "/by-address?count=4", null);
        assertThat(page.statusCode()).isEqualTo(200);

        assertThat(page.body().length())
                .as(
                        "a page of %d entries, each under a 1 MB field in Redis",
                        json(page).path("entries").size())
                .isLessThan(1_000_000);
    }
}
