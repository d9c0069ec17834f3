package io.github.ratelimit.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code ratelimit.redis.*} settings both entry points parse, and what they check. */
class RedisSettingsTest {

    private static RedisSettings parse(Map<String, String> properties) {
        return RateLimitSettings.parse(properties, "rules.properties", RateLimitSettings.EntryPoint.SERVLET_FILTER)
                .redis();
    }

    @Test
    void theBackgroundTimeoutIsTwoSecondsUnlessGiven() {
        assertThat(parse(Map.of("ratelimit.redis.url", "redis://localhost:6379"))
                        .backgroundTimeout())
                .isEqualTo(Duration.ofSeconds(2));
        assertThat(parse(Map.of(
                                "ratelimit.redis.url",
                                "redis://localhost:6379",
                                "ratelimit.redis.background-timeout",
                                "5s"))
                        .backgroundTimeout())
                .isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void aBackgroundTimeoutThatIsNotPositiveIsRefusedByName() {
        assertThatThrownBy(() -> parse(Map.of(
                        "ratelimit.redis.url", "redis://localhost:6379", "ratelimit.redis.background-timeout", "0s")))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("ratelimit.redis.background-timeout");
    }
}
