package io.github.ratelimit.spring.boot.internal.method;

import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;

/**
 * The advisor that applies {@code @RateLimit}: a type of its own, so the start-up check can tell whether a bean's
 * proxy carries it.
 */
public final class RateLimitAdvisor extends DefaultPointcutAdvisor {

    private static final long serialVersionUID = 1L;

    public RateLimitAdvisor(Pointcut pointcut, Advice advice) {
        super(pointcut, advice);
    }
}
