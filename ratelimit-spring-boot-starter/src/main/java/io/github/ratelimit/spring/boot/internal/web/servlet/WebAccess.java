package io.github.ratelimit.spring.boot.internal.web.servlet;

import io.github.ratelimit.spring.boot.internal.method.HandlerId;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.method.HandlerMethod;

/**
 * The current HTTP request and response of a method call, when the call happens inside one and Spring Web is
 * on the class path (the starter makes one only then).
 */
public interface WebAccess {

    HttpServletRequest currentRequest();

    HttpServletResponse currentResponse();

    /**
     * @param request the current request
     * @return the handler method Spring MVC chose for it, or {@code null}
     */
    HandlerId currentHandler(HttpServletRequest request);

    /** Reads Spring's request holder. */
    final class Servlet implements WebAccess {

        /** Spring MVC's attribute holding the handler chosen for the request ({@code HandlerMapping}'s constant). */
        private static final String BEST_MATCHING_HANDLER =
                "org.springframework.web.servlet.HandlerMapping.bestMatchingHandler";

        @Override
        public HttpServletRequest currentRequest() {
            RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
            return attributes instanceof ServletRequestAttributes s ? s.getRequest() : null;
        }

        @Override
        public HttpServletResponse currentResponse() {
            RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
            return attributes instanceof ServletRequestAttributes s ? s.getResponse() : null;
        }

        @Override
        public HandlerId currentHandler(HttpServletRequest request) {
            return request.getAttribute(BEST_MATCHING_HANDLER) instanceof HandlerMethod h
                    ? HandlerId.of(h.getBeanType(), h.getMethod())
                    : null;
        }
    }
}
