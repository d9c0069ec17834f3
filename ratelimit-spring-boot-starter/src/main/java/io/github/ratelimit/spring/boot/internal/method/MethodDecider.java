package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.Guard;
import org.aopalliance.intercept.MethodInvocation;

/**
 * One way a call of a {@code @RateLimit} method is decided, for a kind of call the technology it knows recognises: a
 * call inside a servlet request (Spring MVC), a method returning a publisher or called on an event loop (Reactor).
 * {@link RateLimitMethodInterceptor} asks its deciders in order; the first that {@link #decides} a call decides it,
 * and a call none takes is decided on the calling thread, with no request. Beans of this type, ordered with
 * {@link org.springframework.core.annotation.Order}, are the list.
 */
public interface MethodDecider {

    /**
     * @param invocation the call
     * @param guard the method's rules
     * @param handler the method, as a handler method would name it
     * @return whether this decides the call; answered without side effects on the call
     */
    boolean decides(MethodInvocation invocation, Guard guard, HandlerId handler);

    /**
     * Decides the call and runs it when permitted.
     *
     * @param invocation the call
     * @param guard the method's rules
     * @param handler the method, as a handler method would name it
     * @return what the method's caller gets: its result, or a publisher or future of the declared type
     * @throws io.github.ratelimit.RateLimitExceededException when the call is rejected at once
     * @throws Throwable what the method throws
     */
    Object invoke(MethodInvocation invocation, Guard guard, HandlerId handler) throws Throwable;
}
