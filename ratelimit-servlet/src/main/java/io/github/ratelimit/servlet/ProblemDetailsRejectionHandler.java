package io.github.ratelimit.servlet;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitHeaders;
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
    public static final String MEDIA_TYPE = "application/problem+json";

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
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("rejection status must be 400 to 599, but was " + status);
        }
        this.status = status;
    }

    @Override
    public void reject(HttpServletRequest request, HttpServletResponse response, Decision decision) throws IOException {
        byte[] body = body(decision, status, request.getRequestURI()).getBytes(StandardCharsets.UTF_8);
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
        StringBuilder json = new StringBuilder(200).append("{\"type\":\"about:blank\",\"title\":");
        string(json, title(status)).append(",\"status\":").append(status).append(",\"detail\":");
        string(json, decision.describe());
        if (instance != null) {
            string(json.append(",\"instance\":"), instance);
        }
        json.append(",\"retryAfter\":").append(RateLimitHeaders.retryAfterSeconds(decision));
        return json.append('}').toString();
    }

    private static String title(int status) {
        return switch (status) {
            case 429 -> "Too Many Requests";
            case 503 -> "Service Unavailable";
            case 403 -> "Forbidden";
            default -> "Request Rejected";
        };
    }

    private static StringBuilder string(StringBuilder json, String value) {
        json.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                case '\n' -> json.append("\\n");
                case '\r' -> json.append("\\r");
                case '\t' -> json.append("\\t");
                default -> {
                    if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"');
    }
}
