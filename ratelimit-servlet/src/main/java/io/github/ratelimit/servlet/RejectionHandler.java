package io.github.ratelimit.servlet;

import io.github.ratelimit.Decision;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Writes the response to a rejected request. The filter has set {@code Retry-After} and the rate-limit headers
 * before calling it. The default is {@link ProblemDetailsRejectionHandler}; replace it to change the status,
 * body or headers. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface RejectionHandler {

    /**
     * @param request the rejected request
     * @param response its response, not yet committed
     * @param decision the rejection
     * @throws IOException when writing fails
     */
    void reject(HttpServletRequest request, HttpServletResponse response, Decision decision) throws IOException;
}
