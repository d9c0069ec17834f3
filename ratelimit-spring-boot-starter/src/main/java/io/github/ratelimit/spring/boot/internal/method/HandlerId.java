package io.github.ratelimit.spring.boot.internal.method;

import java.lang.reflect.Method;
import org.springframework.aop.support.AopUtils;

/**
 * A handler method as both the rate-limit filter's lookup and the advisor name it: the bean's user class (without
 * proxy subclasses) and the most specific method.
 *
 * @param type the bean's class
 * @param method the method, as declared on or inherited by that class
 */
public record HandlerId(Class<?> type, Method method) {

    public static HandlerId of(Class<?> userType, Method method) {
        return new HandlerId(userType, AopUtils.getMostSpecificMethod(method, userType));
    }
}
