package io.github.ratelimit.spring.boot.internal.method;

import org.jspecify.annotations.Nullable;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;

/** Reads a plan from granted authorities ({@link AuthorityPlans}). Loaded only when Spring Security is present. */
final class SecurityAuthorities {

    private SecurityAuthorities() {}

    /**
     * @param principal the call's principal as a reactive filter resolved it, or {@code null} to read the thread's
     *        security context
     * @param prefix the authorities' prefix, e.g. {@code PLAN_}
     * @return the rest of the first granted authority that starts with the prefix (one such authority per user is
     *         the contract), or {@code null} for none or no authenticated caller
     */
    static @Nullable String planOf(@Nullable Object principal, String prefix) {
        Authentication authentication = principal instanceof Authentication a
                ? a
                : SecurityContextHolder.getContext().getAuthentication();
        if (authentication == null || SecurityPrincipal.isAnonymous(authentication)) {
            return null;
        }
        for (GrantedAuthority authority : authentication.getAuthorities()) {
            String name = authority.getAuthority();
            if (name != null && name.length() > prefix.length() && name.startsWith(prefix)) {
                return name.substring(prefix.length());
            }
        }
        return null;
    }
}
