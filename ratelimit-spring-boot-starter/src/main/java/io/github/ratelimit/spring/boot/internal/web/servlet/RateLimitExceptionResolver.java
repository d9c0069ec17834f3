package io.github.ratelimit.spring.boot.internal.web.servlet;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.servlet.ProblemDetailsRejectionHandler;
import io.github.ratelimit.servlet.RejectionHandler;
import io.github.ratelimit.spring.boot.internal.method.MaskedRejection;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Turns a {@link RateLimitExceededException} from a web request into the same response the filter writes
 * (status, headers, problem+json body), through the {@link RejectionHandler} bean. It runs after the
 * application's own {@code @ExceptionHandler}s, so one of those can answer differently. A
 * {@link CallTooLargeException} (a call of more permits than a rule's window holds) is answered 413.
 */
public final class RateLimitExceptionResolver implements HandlerExceptionResolver, Ordered {

    private final RejectionHandler rejectionHandler;

    public RateLimitExceptionResolver(RejectionHandler rejectionHandler) {
        this.rejectionHandler = rejectionHandler;
    }

    @Override
    public ModelAndView resolveException(
            HttpServletRequest request, HttpServletResponse response, Object handler, Exception ex) {
        if (ex instanceof CallTooLargeException tooLarge && !response.isCommitted()) {
            // A call of more permits than a rule's window holds (a @RateLimit(permits = ...) batch): 413.
            try {
                ProblemDetailsRejectionHandler.tooLarge(request, response, tooLarge);
            } catch (IOException e) {
                // The client went away.
            }
            return new ModelAndView();
        }
        if (!(ex instanceof RateLimitExceededException rejected) || response.isCommitted()) {
            return null;
        }
        Decision decision = rejected.decision();
        if (request.getAttribute(ServletMethodRateLimit.UNDISCLOSED_ATTRIBUTE) == decision) {
            // A limit inside the application (an outbound client's) turned the request away: say when to come
            // back, not which class and method it was.
            decision = MaskedRejection.of(decision);
        }
        try {
            rejectionHandler.reject(request, response, decision);
        } catch (IOException e) {
            // The client went away.
        }
        return new ModelAndView();
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE - 100;
    }
}
