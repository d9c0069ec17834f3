package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.key.KeyResolver;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/**
 * The starter's expressions that are not SpEL: {@code authority:<prefix>}, a plan named by the caller's granted
 * authority ({@code ratelimit.plan-from=authority:PLAN_}: authority {@code PLAN_pro} names plan {@code pro}), read
 * from Spring Security's authentication of the call (the reactive one the WebFlux filter resolved, else the
 * thread's security context). Any other expression goes to the next factory (SpEL). Thread-safe.
 */
public final class AuthorityPlans implements KeyResolver.Factory {

    /** The exchange attribute the WebFlux filter keeps the request's principal in, once it resolved it. */
    public static final String PRINCIPAL_ATTRIBUTE = AuthorityPlans.class.getName() + ".principal";

    private static final String PREFIX = "authority:";
    private static final String PLAN_FROM = "plan-from";
    private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
            "org.springframework.security.core.Authentication", AuthorityPlans.class.getClassLoader());

    private final KeyResolver.Factory next;

    /**
     * @param next the factory of every other expression
     */
    public AuthorityPlans(KeyResolver.Factory next) {
        this.next = next;
    }

    @Override
    public @Nullable KeyResolver create(String expression, String source) {
        String trimmed = expression.trim();
        // Only where a plan comes from (the limiter compiles ratelimit.plan-from as "plan-from"): a key or permits
        // written authority:... is unknown to the built-in grammar, which says so at start-up.
        if (!trimmed.startsWith(PREFIX) || !PLAN_FROM.equals(source)) {
            return next.create(expression, source);
        }
        String prefix = trimmed.substring(PREFIX.length()).trim();
        if (prefix.isEmpty() || prefix.chars().anyMatch(c -> c <= ' ' || c == 0x7f)) {
            throw new InvalidRateLimitConfigurationException(
                    source,
                    expression,
                    "'" + expression + "' names no " + "authority prefix",
                    "Write authority:<prefix>, e.g. authority:PLAN_ (authority PLAN_pro names plan " + "pro).");
        }
        if (!SECURITY_PRESENT) {
            throw new InvalidRateLimitConfigurationException(
                    source,
                    expression,
                    "'" + expression + "' reads granted " + "authorities, but Spring Security is not on the class path",
                    "Add spring-boot-starter-security, "
                            + "or name the plan another way (header:<Name> set by a trusted gateway, SpEL).");
        }
        return context -> SecurityAuthorities.planOf(context.attribute(PRINCIPAL_ATTRIBUTE), prefix);
    }
}
