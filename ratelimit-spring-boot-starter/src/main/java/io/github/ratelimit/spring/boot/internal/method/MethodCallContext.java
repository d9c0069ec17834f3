package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.RequestContext;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RequestContext} for a method call outside any web request: the principal, and the invocation for SpEL
 * keys over the arguments. Keys that read a request ({@code ip}, headers) find nothing.
 *
 * @param invocation the call
 * @param principal the authenticated principal's name, or {@code null}
 */
public record MethodCallContext(MethodInvocation invocation, String principal) implements RequestContext {

    /** The attribute holding the {@link MethodInvocation} of a call, in every context of a method call. */
    public static final String INVOCATION = "ratelimit.invocation";

    @Override
    public @Nullable Object attribute(String name) {
        return MethodCallContext.INVOCATION.equals(name) ? invocation : null;
    }
}
