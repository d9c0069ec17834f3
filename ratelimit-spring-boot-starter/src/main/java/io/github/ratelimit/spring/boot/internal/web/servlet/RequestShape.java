package io.github.ratelimit.spring.boot.internal.web.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import org.springframework.util.StringUtils;

/**
 * Everything of a request that Spring MVC's handler lookup reads, when its handler mappings read nothing else
 * ({@link MvcHandlerRules#answersByShape}): the key under which {@link MvcHandlerRules} remembers what a lookup
 * found. Two requests of equal shapes reach the same handler, with the same path variables.
 *
 * <p>A shape holds, compared exactly:
 * <ul>
 * <li>the method;</li>
 * <li>the request URI, context path and servlet path (the path Spring parses), and the character encoding (with which
 *     a {@code UrlPathHelper} decodes it);</li>
 * <li>every {@code Accept} header line, in order, repeated lines included: a mapping's {@code produces} condition
 *     reads them all ({@code getHeaders}), so the second line can change the handler as much as the first, and an
 *     empty line is not an absent header;</li>
 * <li>the content type Spring reads ({@code getContentType()}) and every {@code Content-Type} line, in order (a
 *     mapping's {@code consumes} condition);</li>
 * <li>whether the request has a body, as a {@code consumes} condition tells it (a {@code Transfer-Encoding}, or a
 *     {@code Content-Length} other than 0): a handler whose {@code @RequestBody} is optional matches a request
 *     without one whatever its {@code Content-Type}.</li>
 * </ul>
 *
 * <p>A request has no shape, and is looked up every time, when it is an {@code OPTIONS} request (a CORS preflight is
 * answered by its {@code Origin} and {@code Access-Control-Request-*} headers), when {@code Accept} or
 * {@code Content-Type} comes in more than {@link #MAX_LINES} lines, or when what the shape would hold exceeds
 * {@link #MAX_LENGTH} characters: a remembered shape stays small, and a request cannot grow the cache by more than
 * that.
 *
 * @param method the request's method
 * @param uri the request URI, without the query
 * @param contextPath the context path
 * @param servletPath the servlet path
 * @param encoding the request's character encoding, or {@code null}
 * @param accept every {@code Accept} line, in order
 * @param contentType the request's content type, or {@code null}
 * @param contentTypes every {@code Content-Type} line, in order
 * @param body whether the request has a body, as Spring's {@code consumes} condition tells it
 */
record RequestShape(
        String method,
        String uri,
        String contextPath,
        String servletPath,
        String encoding,
        List<String> accept,
        String contentType,
        List<String> contentTypes,
        boolean body) {

    /** The most characters a shape holds, all its texts together; a request that needs more has no shape. */
    static final int MAX_LENGTH = 512;

    /** The most lines of {@code Accept}, and of {@code Content-Type}, a shape holds; more, and a request has none. */
    static final int MAX_LINES = 4;

    /**
     * @param request a request
     * @return its shape, or {@code null} when it must be looked up every time (see the class description)
     */
    static RequestShape of(HttpServletRequest request) {
        String method = request.getMethod();
        String uri = request.getRequestURI();
        if (method == null || uri == null || "OPTIONS".equals(method)) {
            return null;
        }
        String contextPath = request.getContextPath();
        String servletPath = request.getServletPath();
        String encoding = request.getCharacterEncoding();
        String contentType = request.getContentType();
        int length = method.length()
                + uri.length()
                + length(contextPath)
                + length(servletPath)
                + length(encoding)
                + length(contentType);
        if (length > MAX_LENGTH) {
            return null;
        }
        List<String> accept = lines(request.getHeaders("Accept"), MAX_LENGTH - length);
        if (accept == null) {
            return null;
        }
        for (String line : accept) {
            length += line.length();
        }
        List<String> contentTypes = lines(request.getHeaders("Content-Type"), MAX_LENGTH - length);
        if (contentTypes == null) {
            return null;
        }
        return new RequestShape(
                method, uri, contextPath, servletPath, encoding, accept, contentType, contentTypes, hasBody(request));
    }

    private static int length(String text) {
        return text == null ? 0 : text.length();
    }

    /**
     * @param values a header's lines, or {@code null} when the container gives none
     * @param budget the most characters they may hold together
     * @return the lines in order, or {@code null} when there are more than {@link #MAX_LINES} or more characters
     */
    private static List<String> lines(Enumeration<String> values, int budget) {
        if (values == null || !values.hasMoreElements()) {
            return List.of();
        }
        String first = values.nextElement();
        if (first == null || first.length() > budget) {
            return null;
        }
        if (!values.hasMoreElements()) {
            return List.of(first); // the common case
        }
        List<String> lines = new ArrayList<>(MAX_LINES);
        lines.add(first);
        int left = budget - first.length();
        while (values.hasMoreElements()) {
            String next = values.nextElement();
            if (next == null || lines.size() == MAX_LINES || next.length() > left) {
                return null;
            }
            lines.add(next);
            left -= next.length();
        }
        return List.copyOf(lines);
    }

    /** Whether the request has a body, read as Spring MVC's {@code ConsumesRequestCondition} reads it. */
    private static boolean hasBody(HttpServletRequest request) {
        String contentLength = request.getHeader("Content-Length");
        String transferEncoding = request.getHeader("Transfer-Encoding");
        return StringUtils.hasText(transferEncoding)
                || StringUtils.hasText(contentLength) && !contentLength.trim().equals("0");
    }
}
