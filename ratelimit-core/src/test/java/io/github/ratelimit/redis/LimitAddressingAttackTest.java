package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.admin.KeyOperations;
import io.github.ratelimit.testing.CapturedLog;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The addressing of the admin operations attacked at the core, shared by the servlet and the Actuator endpoint: an
 * address that names a key whose text itself starts like a {@code ~stored:} address.
 */
class LimitAddressingAttackTest {

    private static final Rule API =
            Rule.builder("api").key("header:X-Client").limits("2/1h").build();

    @RegisterExtension
    static final LimitStoreRedis REDIS = new LimitStoreRedis();

    private static String b64(String key) {
        return LimitAdmin.ADDRESS_PREFIX
                + Base64.getUrlEncoder().withoutPadding().encodeToString(key.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The key {@code ~stored:!!} (settable and listed through its {@code ~b64:} address, like any key of 1 to 128
     * characters) is reset, and the audit log says so: the answer is 200, not a 400 read from the key taken for an
     * address.
     */
    @Test
    void aResetThatWasAppliedIsNotAnsweredAsRefused() {
        try (CapturedLog audit = CapturedLog.of("io.github.ratelimit.limits");
                RedisLimitProvider store = REDIS.store(LimitStoreRedis.prefix());
                RateLimiter limiter = RateLimiter.builder()
                        .limitProvider(store, Duration.ofMinutes(10))
                        .build()) {
            limiter.guard(API);
            KeyOperations operations = new KeyOperations(LimitAdmin.of(limiter, store), (rule, key) -> {});
            String address = b64("~stored:!!");

            KeyOperations.Answer set = operations.change("api", address, "5/1s", null, null, "ops");
            assertThat(set.status())
                    .as("a set of that very key: %s", set.body())
                    .isEqualTo(200);
            KeyOperations.Answer reset = operations.change("api", address, null, null, true, "ops");

            boolean logged = audit.messages().stream().anyMatch(m -> m.contains("reset by 'ops'"));
            assertThat(logged)
                    .as("the reset was applied and logged: %s", audit.messages())
                    .isTrue();
            assertThat(reset.status())
                    .as("the answer to a reset that was applied: %s", reset.body())
                    .isEqualTo(200);
        }
    }

    /**
     * The key {@code ~stored:YWxpY2U} (literally) is reset through its {@code ~b64:} address: the answer names that key
     * and address, not {@code alice}, whose address the key would be.
     */
    @Test
    void aResetIsAnsweredWithTheKeyItReset() {
        try (CapturedLog audit = CapturedLog.of("io.github.ratelimit.limits");
                RedisLimitProvider store = REDIS.store(LimitStoreRedis.prefix());
                RateLimiter limiter = RateLimiter.builder()
                        .limitProvider(store, Duration.ofMinutes(10))
                        .build()) {
            limiter.guard(API);
            KeyOperations operations = new KeyOperations(LimitAdmin.of(limiter, store), (rule, key) -> {});
            String literal = "~stored:YWxpY2U"; // base64url of "alice" after the prefix
            String address = b64(literal);

            KeyOperations.Answer reset = operations.change("api", address, null, null, true, "ops");

            assertThat(audit.messages()).as("what was reset").anyMatch(m -> m.contains("key '~stored:YWxpY2U' reset"));
            assertThat(reset.status()).as(reset.body().toString()).isEqualTo(200);
            assertThat(reset.body().get("key"))
                    .as("the key the answer names: %s", reset.body())
                    .isEqualTo(literal);
            assertThat(reset.body().get("address"))
                    .as("the address the answer gives: %s", reset.body())
                    .isEqualTo(address);
        }
    }
}
