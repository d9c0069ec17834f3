package io.github.ratelimit.internal.web;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitHeaders;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The RFC 9457 {@code application/problem+json} body every web entry point answers a rejection with (the servlet
 * filter, Spring MVC, Spring WebFlux), so clients read one shape whichever way the application is built:
 *
 * <pre>{@code
 * {"type":"about:blank","title":"Too Many Requests","status":429,
 *  "detail":"Rate limit of rule 'api' exceeded; retry after 1 s.","instance":"/api/hello","retryAfter":1}
 * }</pre>
 */
public final class ProblemDetails {

    /** The media type of the body. */
    public static final String MEDIA_TYPE = "application/problem+json";

    private ProblemDetails() {}

    /**
     * @param decision a rejection
     * @param status the response status
     * @param instance the request URI, or {@code null}
     * @return the problem details JSON; every string escaped, including {@code <}, {@code >} and {@code &}, so a
     *         request path cannot inject markup into a client that renders the body
     */
    public static String body(Decision decision, int status, String instance) {
        return body(decision.describe(), status, instance, RateLimitHeaders.retryAfterSeconds(decision));
    }

    /** The status of a call no window of a rule could ever hold ({@link io.github.ratelimit.CallTooLargeException}). */
    public static final int TOO_LARGE = 413;

    /**
     * @param e a call no window of a rule could ever hold
     * @param instance the request URI, or {@code null}
     * @return the problem details JSON of a 413 answer: the rule as clients see it and the most a request may count
     *         as, no {@code retryAfter} (waiting cannot help)
     */
    public static String tooLarge(CallTooLargeException e, String instance) {
        return body(e.describe(), TOO_LARGE, instance, -1);
    }

    /**
     * @param detail what happened, for people
     * @param status the response status
     * @param instance the request URI, or {@code null}
     * @param retryAfterSeconds when to come back, as the {@code Retry-After} header says; below 0 for no
     *        {@code retryAfter} member
     * @return the problem details JSON, escaped as {@link #body(Decision, int, String)}'s
     */
    public static String body(String detail, int status, String instance, long retryAfterSeconds) {
        StringBuilder json = new StringBuilder(200).append("{\"type\":\"about:blank\",\"title\":");
        Json.string(json, title(status)).append(",\"status\":").append(status).append(",\"detail\":");
        Json.string(json, detail);
        if (instance != null) {
            Json.string(json.append(",\"instance\":"), instance);
        }
        if (retryAfterSeconds >= 0) {
            json.append(",\"retryAfter\":").append(retryAfterSeconds);
        }
        return json.append('}').toString();
    }

    /**
     * @param status a rejection status, 400 to 599
     * @throws IllegalArgumentException when it is not
     */
    public static void checkStatus(int status) {
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("rejection status must be 400 to 599, but was " + status);
        }
    }

    /**
     * As {@link #body(String, int, String, long)}, for answers other than rejections (the admin servlet's): the
     * extension members follow the standard ones, which they cannot replace.
     *
     * @param detail what happened, for people
     * @param status the response status
     * @param instance the request URI, or {@code null}
     * @param extensions more members, as {@link Json} writes them
     * @return the problem details JSON, escaped as {@link #body(Decision, int, String)}'s
     */
    public static String body(String detail, int status, String instance, Map<String, ?> extensions) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "about:blank");
        body.put("title", title(status));
        body.put("status", status);
        body.put("detail", detail);
        if (instance != null) {
            body.put("instance", instance);
        }
        extensions.forEach(body::putIfAbsent);
        return Json.write(body);
    }

    /** The status's reason phrase, which RFC 9457 asks of the title of type {@code about:blank}. */
    private static String title(int status) {
        return switch (status) {
            case 400 -> "Bad Request";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 413 -> "Content Too Large";
            case 415 -> "Unsupported Media Type";
            case 429 -> "Too Many Requests";
            case 503 -> "Service Unavailable";
            default -> "Request Rejected";
        };
    }
}
