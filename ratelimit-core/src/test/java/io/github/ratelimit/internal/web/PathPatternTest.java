package io.github.ratelimit.internal.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
        "/a/**/b/**/c, /a/x/y/z/c, false"
    })
    void matchesAntStylePatterns(String pattern, String path, boolean matches) {
        assertThat(PathPattern.parse(pattern, "test").matches(path)).isEqualTo(matches);
    }

    /**
     * The shortcuts (a first segment of plain text checked first, plain patterns compared without splitting the path)
     * answer exactly as the general match does, on patterns and paths drawn at random: empty segments, trailing
     * slashes, prefixes of a segment, the root.
     */
    @Test
    void theShortcutsAgreeWithTheGeneralMatchEverywhere() {
        String[] patternSegments = {"api", "a", "ab", "*", "a*", "?", "**", "v?", "x"};
        String[] pathSegments = {"api", "a", "ab", "abc", "x", "v1", "", "ap"};
        java.util.Random random = new java.util.Random(23);
        int checked = 0;
        for (int i = 0; i < 2_000; i++) {
            StringBuilder pattern = new StringBuilder();
            for (int n = random.nextInt(4); n >= 0; n--) {
                pattern.append('/').append(patternSegments[random.nextInt(patternSegments.length)]);
            }
            PathPattern parsed = PathPattern.parse(random.nextInt(10) == 0 ? "/" : pattern.toString(), "test");
            for (int j = 0; j < 20; j++) {
                StringBuilder path = new StringBuilder();
                for (int n = random.nextInt(5); n > 0; n--) {
                    path.append('/').append(pathSegments[random.nextInt(pathSegments.length)]);
                }
                String p = path.length() == 0 || random.nextInt(8) == 0 ? path + "/" : path.toString();
                assertThat(parsed.matches(p)).as("%s against %s", parsed, p).isEqualTo(parsed.matchesBySegments(p));
                checked++;
            }
        }
        assertThat(checked).isEqualTo(40_000);
    }

    @Test
    void answersHostilePathsWithoutBacktrackingBlowUp() {
        // Exponential backtracking would not finish within the generous hang guard; linear matching does at once.
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            assertThat(PathPattern.parse("/**/a/**/a/**/a/**/b", "test").matches("/a".repeat(60)))
                    .isFalse();
            assertThat(PathPattern.parse("/**", "test").matches("/x".repeat(10_000)))
                    .isTrue();
            // However deep, a path under /api is under /api/**: a cap on depth would let clients slip past a rule.
            assertThat(PathPattern.parse("/api/**", "test").matches("/api" + "/x".repeat(10_000)))
                    .isTrue();
            assertThat(PathPattern.parse("/api/*/orders", "test").matches("/api" + "/x".repeat(10_000)))
                    .isFalse();
            assertThat(PathPattern.parse("/*a*a*a*a*b", "test").matches("/" + "a".repeat(5000)))
                    .isFalse();
        });
    }

    @Test
    void rejectsMalformedPatterns() {
        assertThatThrownBy(() -> PathPattern.parse("api/**", "ratelimit.rules[0]"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage(
                        "ratelimit.rules[0]: path pattern 'api/**' does not start with '/'. Write it like '/api/**' "
                                + "or '/login'.");
        assertThatThrownBy(() -> PathPattern.parse("/api/a**", "ratelimit.rules[0]"))
                .hasMessage(
                        "ratelimit.rules[0]: path pattern '/api/a**' has '**' inside the segment 'a**'. Use '**' as "
                                + "a whole segment, e.g. '/api/**'.");
    }
}
