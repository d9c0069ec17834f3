package io.github.ratelimit.spring.boot.internal.web.reactive;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitHeaders;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.internal.web.ProblemDetails;
import io.github.ratelimit.spring.boot.internal.method.MaskedRejection;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.CompletionException;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Answers a {@link RateLimitExceededException} in a WebFlux application (from the filter, or from a
 * {@code @RateLimit} method while a request is served) as the servlet path does: the configured status
 * ({@code ratelimit.reject-status}, 429), {@code Retry-After}, the rate-limit headers and the problem+json body of
 * {@link ProblemDetails}. Only a rejection by the request's own rules (its URL rules, its handler's) names its rule,
 * and any other with {@code ratelimit.method-headers=true}; any other (a service's limit on an outbound call, a
 * future's) says when to come back and nothing about the limit.
 *
 * <p>A {@link CallTooLargeException} (a request that counts as more permits than a rule's window holds) is answered
 * 413 with a problem+json body naming the rule as clients see it.
 *
 * <p>It runs before Spring Boot's error handler ({@code ErrorWebExceptionHandler}, order -1), so the body is the
 * same as on Spring MVC. To answer differently, an application handles the exception itself: an
 * {@code @ExceptionHandler(RateLimitExceededException.class)} in a {@code @ControllerAdvice} for rejections thrown
 * by its handler methods, a {@code WebExceptionHandler} of higher precedence (an order below -2) for every
 * rejection, or a bean named {@code rateLimitWebExceptionHandler} in place of this one.
 */
public final class RateLimitWebExceptionHandler implements WebExceptionHandler, Ordered {

    private final int status;
    private final Set<HeaderStyle> headers;

    public RateLimitWebExceptionHandler(int status, Set<HeaderStyle> headers) {
        ProblemDetails.checkStatus(status);
        this.status = status;
        this.headers = headers;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        ServerHttpResponse response = exchange.getResponse();
        Throwable cause = ex;
        // A future's failure may arrive wrapped (CompletableFuture.join, thenApply): the rejection is beneath.
        for (int i = 0; i < 8 && cause instanceof CompletionException && cause.getCause() != null; i++) {
            cause = cause.getCause();
        }
        if (cause instanceof StoreBusyException busy && !response.isCommitted()) {
            response.getHeaders().set("Retry-After", "1");
            return write(
                    exchange,
                    503,
                    ProblemDetails.body(
                            busy.getReason(),
                            503,
                            exchange.getRequest().getURI().getRawPath(),
                            1));
        }
        if (cause instanceof CallTooLargeException tooLarge && !response.isCommitted()) {
            return write(
                    exchange,
                    ProblemDetails.TOO_LARGE,
                    ProblemDetails.tooLarge(
                            tooLarge, exchange.getRequest().getURI().getRawPath()));
        }
        if (!(cause instanceof RateLimitExceededException rejected) || response.isCommitted()) {
            return Mono.error(ex);
        }
        Decision decision = rejected.decision();
        // Only the request's own rules are described; a rejection from anywhere else names no rule.
        boolean undisclosed = exchange.getAttribute(RateLimitWebFilter.DISCLOSED_REJECTION_ATTRIBUTE) != decision;
        if (undisclosed) {
            decision = MaskedRejection.of(decision);
        }
        // The request's combined decision (the URL rules' items beside the handler's) when it is this rejection's.
        Decision shown = !undisclosed
                        && exchange.getAttribute(RateLimitWebFilter.DECISION_ATTRIBUTE) instanceof Decision d
                        && !d.permitted()
                ? d
                : decision;
        RateLimitHeaders.write(shown, undisclosed ? Set.of() : headers, response.getHeaders()::set);
        return write(
                exchange,
                status,
                ProblemDetails.body(
                        decision, status, exchange.getRequest().getURI().getRawPath()));
    }

    private static Mono<Void> write(ServerWebExchange exchange, int status, String json) {
        ServerHttpResponse response = exchange.getResponse();
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        response.setStatusCode(HttpStatusCode.valueOf(status));
        response.getHeaders().setContentType(MediaType.parseMediaType(ProblemDetails.MEDIA_TYPE));
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(
                Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
    }

    @Override
    public int getOrder() {
        return -2;
    }
}
