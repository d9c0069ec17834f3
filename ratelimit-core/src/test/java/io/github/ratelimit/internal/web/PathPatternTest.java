package io.github.ratelimit.internal.web;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

class PathPatternTest {

    @ParameterizedTest
    @CsvSource({
            "/login, /login, true",
            "/login, /login/, true",
            "/login, /logout, false",
            "/api/**, /api, true",
            "/api/**, /api/a/b/c, true",
            "/api/**, /apix, false",
            "/api/*, /api/a, true",
            "/api/*, /api/a/b, false",
            "/users/*/orders, /users/42/orders, true",
            "/users/*/orders, /users/42/items, false",
            "/files/*.pdf, /files/report.pdf, true",
            "/files/*.pdf, /files/report.txt, false",
            "/v?/items, /v1/items, true",
            "/**, /, true",
            "/**/admin, /a/b/admin, true",
            "/**/admin, /admin, true",
            "/a/**/b/**/c, /a/x/b/y/z/c, true",
            "/a/**/b/**/c, /a/x/y/z/c, false"})
    void matchesAntStylePatterns(String pattern, String path, boolean matches) {
        assertThat(PathPattern.parse(pattern, "test").matches(path)).isEqualTo(matches);
    }

    @Test
    void answersHostilePathsWithoutBacktrackingBlowUp() {
        // Exponential backtracking would not finish within the generous hang guard; linear matching does at once.
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            assertThat(PathPattern.parse("/**/a/**/a/**/a/**/b", "test").matches("/a".repeat(60))).isFalse();
            assertThat(PathPattern.parse("/**", "test").matches("/x".repeat(10_000))).isTrue();
            // However deep, a path under /api is under /api/**: a cap on depth would let clients slip past a rule.
            assertThat(PathPattern.parse("/api/**", "test").matches("/api" + "/x".repeat(10_000))).isTrue();
            assertThat(PathPattern.parse("/api/*/orders", "test").matches("/api" + "/x".repeat(10_000))).isFalse();
            assertThat(PathPattern.parse("/*a*a*a*a*b", "test").matches("/" + "a".repeat(5000))).isFalse();
        });
    }

    @Test
    void rejectsMalformedPatterns() {
        assertThatThrownBy(() -> PathPattern.parse("api/**", "ratelimit.rules[0]"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("ratelimit.rules[0]: path pattern 'api/**' does not start with '/'. Write it like '/api/**' "
                        + "or '/login'.");
        assertThatThrownBy(() -> PathPattern.parse("/api/a**", "ratelimit.rules[0]"))
                .hasMessage("ratelimit.rules[0]: path pattern '/api/a**' has '**' inside the segment 'a**'. Use '**' as "
                        + "a whole segment, e.g. '/api/**'.");
    }
}
