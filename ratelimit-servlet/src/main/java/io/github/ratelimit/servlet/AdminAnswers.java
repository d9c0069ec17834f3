package io.github.ratelimit.servlet;

import io.github.ratelimit.internal.admin.KeyOperations;
import io.github.ratelimit.internal.web.Json;
import io.github.ratelimit.internal.web.ProblemDetails;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Writes {@link RateLimitAdminServlet}'s answers: JSON for a success, RFC 9457 {@code application/problem+json} for
 * a failure ({@code detail} the message, and the answer's other fields as extension members). Never cached; no body
 * for {@code HEAD}.
 */
final class AdminAnswers {

    private final HttpServletRequest request;
    private final HttpServletResponse response;

    AdminAnswers(HttpServletRequest request, HttpServletResponse response) {
        this.request = request;
        this.response = response;
    }

    /**
     * @param answer an answer of the key operations: JSON under 400, problem details from 400 on
     * @throws IOException when the client cannot be written to
     */
    void write(KeyOperations.Answer answer) throws IOException {
        if (answer.status() < 400) {
            json(answer.status(), answer.body());
            return;
        }
        Map<String, Object> extensions = new LinkedHashMap<>(answer.body());
        Object message = extensions.remove("message");
        problem(answer.status(), String.valueOf(message), extensions);
    }

    /**
     * @param status the status
     * @param body the body, as {@link Json} writes it
     * @throws IOException when the client cannot be written to
     */
    void json(int status, Object body) throws IOException {
        send(status, "application/json", Json.write(body));
    }

    /**
     * @param status the status, 400 or more
     * @param detail what went wrong, for people
     * @throws IOException when the client cannot be written to
     */
    void problem(int status, @Nullable String detail) throws IOException {
        problem(status, detail, Map.of());
    }

    private void problem(int status, @Nullable String detail, Map<String, Object> extensions) throws IOException {
        send(
                status,
                ProblemDetails.MEDIA_TYPE,
                ProblemDetails.body(detail, status, request.getRequestURI(), extensions));
    }

    private void send(int status, String mediaType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.setContentType(mediaType);
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-store");
        response.setContentLength(bytes.length);
        if (!"HEAD".equals(request.getMethod())) {
            response.getOutputStream().write(bytes);
        }
    }
}
