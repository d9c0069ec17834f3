package io.github.ratelimit.spring.boot.internal.web.servlet;

import jakarta.servlet.ServletContext;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import org.springframework.mock.web.MockHttpServletRequest;

/**
 * A request whose {@code Content-Type} may come in several lines, as a servlet container hands them over: every line
 * from {@code getHeaders}, the first from {@code getHeader} and {@code getContentType} (as Tomcat answers).
 * {@link MockHttpServletRequest} alone keeps one {@code Content-Type}, the last one set.
 */
final class ContainerRequest extends MockHttpServletRequest {

    private final List<String> contentTypes = new ArrayList<>();

    ContainerRequest(ServletContext context, String method, String uri) {
        super(context, method, uri);
    }

    /** Adds a {@code Content-Type} line after those already there. */
    void addContentType(String line) {
        if (contentTypes.isEmpty()) {
            setContentType(line);
        }
        contentTypes.add(line);
    }

    @Override
    public Enumeration<String> getHeaders(String name) {
        if ("Content-Type".equalsIgnoreCase(name)) {
            return Collections.enumeration(contentTypes);
        }
        return super.getHeaders(name);
    }
}
