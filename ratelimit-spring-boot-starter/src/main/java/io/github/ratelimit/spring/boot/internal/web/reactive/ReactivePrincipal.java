package io.github.ratelimit.spring.boot.internal.web.reactive;

import io.github.ratelimit.spring.boot.internal.method.SecurityPrincipal;
import java.security.Principal;
import java.util.Optional;
import org.springframework.util.ClassUtils;

/**
 * The name a reactive call's {@code user} key counts by: the exchange's principal, as Spring Security's reactive
 * security context supplies it. An anonymous or unauthenticated Spring Security token is no one, as on the servlet
 * path ({@link SecurityPrincipal}).
 */
final class ReactivePrincipal {

    private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
            "org.springframework.security.core.Authentication", ReactivePrincipal.class.getClassLoader());

    private ReactivePrincipal() {}

    static Optional<String> nameOf(Principal principal) {
        if (principal == null || (SECURITY_PRESENT && SecurityPrincipal.isAnonymous(principal))) {
            return Optional.empty();
        }
        return Optional.ofNullable(principal.getName());
    }
}
