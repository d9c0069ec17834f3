package io.github.ratelimit.spring.boot;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimitAnnotations;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * Compiles every {@code @RateLimit} in the application context once all singletons exist: an unknown key, a
 * bad SpEL expression, a missing limit, a SOFT rule without {@code maxDelay}, two rules with one name, all stop
 * the application from starting (with a failure analysis), instead of failing the first call.
 */
final class RateLimitAnnotationValidator implements SmartInitializingSingleton {

    private final ConfigurableListableBeanFactory beanFactory;
    private final org.springframework.beans.factory.ObjectProvider<RateLimitMethodInterceptor> interceptors;

    RateLimitAnnotationValidator(ConfigurableListableBeanFactory beanFactory,
                                 org.springframework.beans.factory.ObjectProvider<RateLimitMethodInterceptor> interceptors) {
        this.beanFactory = beanFactory;
        this.interceptors = interceptors;
    }

    @Override
    public void afterSingletonsInstantiated() {
        RateLimitMethodInterceptor interceptor = interceptors.getObject();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Class<?> type = beanFactory.getType(name, false);
            if (type == null) {
                continue;
            }
            Class<?> userType = ClassUtils.getUserClass(type);
            boolean typeLevel = RateLimitAnnotations.isAnnotated(userType);
            ReflectionUtils.doWithMethods(userType, method -> interceptor.guardFor(userType, method),
                    method -> !method.isBridge() && !method.isSynthetic() && method.getDeclaringClass() != Object.class
                            && (method.isAnnotationPresent(RateLimit.class)
                            || method.isAnnotationPresent(io.github.ratelimit.RateLimits.class)
                            || (typeLevel && Modifier.isPublic(method.getModifiers()))));
        }
    }

    static boolean appliesTo(Method method, Class<?> targetClass) {
        Class<?> userType = ClassUtils.getUserClass(targetClass);
        Method specific = org.springframework.aop.support.AopUtils.getMostSpecificMethod(method, userType);
        if (specific.getDeclaringClass() == Object.class) {
            return false;
        }
        return RateLimitAnnotations.isAnnotated(specific) || RateLimitAnnotations.isAnnotated(userType);
    }
}
