package io.github.ratelimit.spring.boot.internal.method;

import java.security.Principal;
import org.jspecify.annotations.Nullable;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

/** The authenticated Spring Security principal's name. Loaded only when Spring Security is present. */
public final class SecurityPrincipal {

    private SecurityPrincipal() {}

    /**
     * @param principal a principal
     * @return whether it is a Spring Security authentication that names no one: anonymous, or not authenticated
     */
    public static boolean isAnonymous(Principal principal) {
        return principal instanceof Authentication a
                && (!a.isAuthenticated() || a instanceof AnonymousAuthenticationToken);
    }

    public static @Nullable String currentName() {
        Authentication a = SecurityContextHolder.getContext().getAuthentication();
        return a == null || isAnonymous(a) ? null : a.getName();
    }
}
