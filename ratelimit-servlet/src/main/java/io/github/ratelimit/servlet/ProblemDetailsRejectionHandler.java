package io.github.ratelimit.servlet;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision;
import io.github.ratelimit.internal.web.ProblemDetails;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Answers a rejection with an RFC 9457 {@code application/problem+json} body:
 *
 * <pre>{@code
 * HTTP/1.1 429 Too Many Requests
 * Retry-After: 1
 * Content-Type: application/problem+json
 *
 * {"type":"about:blank","title":"Too Many Requests","status":429,
 *  "detail":"Rate limit of rule 'api' exceeded; retry after 1 s.","instance":"/api/hello","retryAfter":1}
 * }</pre>
 *
 * Immutable and thread-safe.
 */
public final class ProblemDetailsRejectionHandler implements RejectionHandler {

    /** The media type of the body. */
    public static final String MEDIA_TYPE = ProblemDetails.MEDIA_TYPE;

    private final int status;

    /**
     * A handler answering 429 Too Many Requests.
     */
    public ProblemDetailsRejectionHandler() {
        this(429);
    }

    /**
     * @param status the status to answer with, 400 to 599
     */
    public ProblemDetailsRejectionHandler(int status) {
        ProblemDetails.checkStatus(status);
        this.status = status;
    }

    @Override
    public void reject(HttpServletRequest request, HttpServletResponse response, Decision decision) throws IOException {
        write(response, status, body(decision, status, request.getRequestURI()));
    }

    /**
     * Answers a request no window of a rule could ever hold ({@link io.github.ratelimit.CallTooLargeException}): 413,
     * with a problem+json body naming the rule as clients see it and the most a request may count as. Used by the
     * filter and by the Spring Boot starter for a {@code @RateLimit(permits = ...)} method.
     *
     * @param request the request
     * @param response its response, not committed
     * @param e what was too large
     * @throws IOException when the client went away
     */
    public static void tooLarge(HttpServletRequest request, HttpServletResponse response, CallTooLargeException e)
            throws IOException {
        write(response, ProblemDetails.TOO_LARGE, ProblemDetails.tooLarge(e, request.getRequestURI()));
    }

    /** Writes a problem+json answer: the status, the media type, the body. */
    static void write(HttpServletResponse response, int status, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.setContentType(MEDIA_TYPE);
        response.setCharacterEncoding("UTF-8");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /**
     * @param decision a rejection
     * @param status the response status
     * @param instance the request URI, or {@code null}
     * @return the problem details JSON
     */
    public static String body(Decision decision, int status, String instance) {
        return ProblemDetails.body(decision, status, instance);
    }
}
