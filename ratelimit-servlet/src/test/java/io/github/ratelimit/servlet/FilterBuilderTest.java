package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verifyNoInteractions;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import jakarta.servlet.FilterChain;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;

/** What the filter's builder and its request path refuse, with messages that name the mistake. */
class FilterBuilderTest {

    @Test
    void aFilterUsedBeforeInitRefusesTheRequestRatherThanLetItThroughUnlimited() {
        RateLimitFilter filter = new RateLimitFilter();
        FilterChain chain = mock(FilterChain.class);
        assertThatThrownBy(
                        () -> filter.doFilter(mock(HttpServletRequest.class), mock(HttpServletResponse.class), chain))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("before init");
        verifyNoInteractions(chain);
    }

    @Test
    void nullPathsOrHeaderStylesAreNamed() {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            RateLimitFilter.Builder builder = RateLimitFilter.builder(limiter);
            Rule rule = Rule.builder("api").limits("5/1s").build();
            assertThatThrownBy(() -> builder.urlRule(rule, (String[]) null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("paths");
            assertThatThrownBy(() -> builder.headers(null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("headerStyles");
        }
    }
}
