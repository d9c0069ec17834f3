package io.github.ratelimit.spring.boot.internal.web.servlet;

import io.github.ratelimit.servlet.RateLimitFilter;
import org.springframework.context.ApplicationListener;
import org.springframework.security.authentication.event.AbstractAuthenticationFailureEvent;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * Marks the current request a failed attempt when Spring Security reports an authentication failure (bad
 * credentials, a locked account, ...), for rules that count only failed attempts. A failed HTTP Basic login is a
 * 401 anyway; a failed form login redirects (302), and only this mark tells it from a successful one. Spring
 * Security publishes the event on the request's thread, inside the rate-limit filter that decides before it.
 */
public final class AuthenticationFailureMarker implements ApplicationListener<AbstractAuthenticationFailureEvent> {

    @Override
    public void onApplicationEvent(AbstractAuthenticationFailureEvent event) {
        RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
        if (attributes != null) {
            attributes.setAttribute(
                    RateLimitFilter.FAILED_ATTEMPT_ATTRIBUTE, Boolean.TRUE, RequestAttributes.SCOPE_REQUEST);
        }
    }
}
