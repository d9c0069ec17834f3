package io.github.ratelimit.spring.boot.internal.web.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

/** The handler's answer when the store's scheduler is saturated, and what it leaves to others. */
class RateLimitWebExceptionHandlerTest {

    private final RateLimitWebExceptionHandler handler =
            new RateLimitWebExceptionHandler(429, Set.of(HeaderStyle.X_RATELIMIT));

    @Test
    void aSaturatedStoreIsAnswered503WithRetryAfterAndAProblemBody() {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/x?y=1"));
        handler.handle(exchange, new StoreBusyException(10_000, new java.util.concurrent.RejectedExecutionException()))
                .block();
        assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(503);
        assertThat(exchange.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
        assertThat(exchange.getResponse().getHeaders().getContentType()).hasToString("application/problem+json");
        assertThat(exchange.getResponse().getBodyAsString().block())
                .isEqualTo(
                        "{\"type\":\"about:blank\","
                                + "\"title\":\"Service Unavailable\",\"status\":503,\"detail\":\"The rate limiter's store is not keeping "
                                + "up: 10000 decisions are waiting for it. Retry after 1 s.\",\"instance\":\"/api/x\",\"retryAfter\":1}");
    }

    @Test
    void otherErrorsAreLeftToTheNextHandler() {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/x"));
        IllegalStateException other = new IllegalStateException("not ours");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> handler.handle(exchange, other).block())
                .isSameAs(other);
        assertThat(exchange.getResponse().getStatusCode()).isNull();
    }
}
