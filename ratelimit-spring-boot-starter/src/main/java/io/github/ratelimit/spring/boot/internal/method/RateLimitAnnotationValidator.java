package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RateLimit;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.config.RateLimitAnnotations;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.scope.ScopedObject;
import org.springframework.aop.scope.ScopedProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Compiles every {@code @RateLimit} in the application context once all singletons exist, and refuses to start
 * where an annotation could not take effect, instead of letting it fail (or be silently ignored) on calls:
 *
 * <ul>
 *   <li>an unknown key, a bad SpEL expression or one that refers to a parameter or bean the method does not have,
 *       a missing limit, a SOFT rule without {@code maxDelay}, two rules with one name;</li>
 *   <li>{@code @RateLimit} on a private, static or final method, which a Spring proxy cannot intercept;</li>
 *   <li>a singleton bean with annotated methods that is not proxied by the rate-limit advisor (created before the
 *       auto-proxy creator, a BeanPostProcessor for example), or a method a JDK interface proxy does not
 *       expose.</li>
 * </ul>
 *
 * A call from inside the same bean ({@code this.limited()}) does not pass through the proxy either; that cannot be
 * seen from here, and is documented.
 */
public final class RateLimitAnnotationValidator implements SmartInitializingSingleton {

    private final ConfigurableListableBeanFactory beanFactory;
    private final ObjectProvider<RateLimitMethodInterceptor> interceptors;
    private final Runnable afterAnnotations;

    /**
     * @param afterAnnotations runs once every annotation is compiled (checks of all rules together)
     */
    public RateLimitAnnotationValidator(
            ConfigurableListableBeanFactory beanFactory,
            ObjectProvider<RateLimitMethodInterceptor> interceptors,
            Runnable afterAnnotations) {
        this.beanFactory = beanFactory;
        this.interceptors = interceptors;
        this.afterAnnotations = afterAnnotations;
    }

    @Override
    public void afterSingletonsInstantiated() {
        RateLimitMethodInterceptor interceptor = interceptors.getObject();
        SpelKeyResolverFactory spel = new SpelKeyResolverFactory(beanFactory);
        for (String name : beanFactory.getBeanDefinitionNames()) {
            if (ScopedProxyUtils.isScopedTarget(name)) {
                continue;
            }
            // A created singleton may be a JDK proxy, whose class has none of the target's annotations.
            Object bean = beanFactory.containsSingleton(name) ? beanFactory.getSingleton(name) : null;
            Class<?> type = bean != null && !(bean instanceof FactoryBean<?>)
                    ? AopProxyUtils.ultimateTargetClass(bean)
                    : beanFactory.getType(name, false);
            if (type == null) {
                continue;
            }
            Class<?> userType = ClassUtils.getUserClass(type);
            List<Method> annotated = annotatedMethods(userType);
            if (annotated.isEmpty()) {
                continue;
            }
            for (Method method : annotated) {
                checkInterceptable(userType, method);
                checkReactiveType(userType, method);
                interceptor.guardFor(userType, method);
                for (Rule rule : RateLimitAnnotations.rulesFor(userType, method)) {
                    if (SpelKeyResolverFactory.isSpel(rule.key())) {
                        spel.checkReferences(rule.key(), method, rule.source());
                    }
                    if (rule.permits() != null && SpelKeyResolverFactory.isSpel(rule.permits())) {
                        spel.checkReferences(rule.permits(), method, rule.source(), "permits");
                    }
                    if (rule.charge() != null) {
                        spel.checkChargeReferences(rule.charge(), method, rule.source());
                    }
                }
            }
            checkProxied(name, bean, userType, annotated);
        }
        afterAnnotations.run();
    }

    /** The methods an annotation applies to: annotated ones, and a type-level annotation's public instance ones. */
    private static List<Method> annotatedMethods(Class<?> userType) {
        boolean typeLevel = RateLimitAnnotations.isAnnotated(userType);
        List<Method> methods = new ArrayList<>();
        ReflectionUtils.doWithMethods(
                userType,
                methods::add,
                method -> !method.isBridge()
                        && !method.isSynthetic()
                        && method.getDeclaringClass() != Object.class
                        && (method.isAnnotationPresent(RateLimit.class)
                                || method.isAnnotationPresent(RateLimit.List.class)
                                || (typeLevel
                                        && Modifier.isPublic(method.getModifiers())
                                        && !Modifier.isStatic(method.getModifiers()))));
        return methods;
    }

    /** Reactive Streams' {@code Publisher}, or {@code null} when no reactive library is on the class path. */
    private static final @Nullable Class<?> PUBLISHER = load("org.reactivestreams.Publisher");

    /** Reactor's {@code Flux}, or {@code null} without Reactor. */
    private static final @Nullable Class<?> FLUX = load("reactor.core.publisher.Flux");

    /** Reactor's {@code Mono}, or {@code null} without Reactor. */
    private static final @Nullable Class<?> MONO = load("reactor.core.publisher.Mono");

    private static @Nullable Class<?> load(String name) {
        try {
            return ClassUtils.forName(name, RateLimitAnnotationValidator.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }

    /**
     * A method returning a reactive type is decided when its publisher is subscribed to
     * ({@code ReactiveMethodRateLimit}), which returns a {@code Mono} or a {@code Flux} in its place: the method
     * must be declared to return one of those (or {@code Publisher}). Another library's type (RxJava's
     * {@code Flowable}) could not be returned, so start-up says so.
     */
    private static void checkReactiveType(Class<?> userType, Method method) {
        Class<?> returned = method.getReturnType();
        if (PUBLISHER == null || !PUBLISHER.isAssignableFrom(returned)) {
            return;
        }
        // The advisor returns a plain Mono or Flux in the method's place: the declared type must accept one.
        boolean supported =
                FLUX != null && MONO != null && (returned.isAssignableFrom(MONO) || returned.isAssignableFrom(FLUX));
        if (!supported) {
            throw new InvalidRateLimitConfigurationException("@RateLimit on " + describe(userType, method)
                    + ", which returns a " + returned.getName() + ": reactive methods are rate limited when subscribed "
                    + "to, through Project Reactor, so they must be declared to return a Mono, a Flux or a Publisher"
                    + (FLUX == null ? ", and Reactor (reactor-core) must be on the class path" : "")
                    + ". Declare the method to return a Flux (convert with Flux.from), or remove the annotation.");
        }
    }

    private static void checkInterceptable(Class<?> userType, Method method) {
        int modifiers = method.getModifiers();
        String what = Modifier.isPrivate(modifiers)
                ? "private"
                : Modifier.isStatic(modifiers) ? "static" : Modifier.isFinal(modifiers) ? "final" : null;
        if (what != null) {
            throw new InvalidRateLimitConfigurationException("@RateLimit on " + describe(userType, method) + ": the "
                    + "method is " + what + ", so a Spring proxy cannot intercept it and the limit would never apply. "
                    + "Make the method public (or protected) and neither static nor final, or move the limit to a "
                    + "method that is.");
        }
    }

    private static void checkProxied(String name, @Nullable Object bean, Class<?> userType, List<Method> annotated) {
        if (bean == null || bean instanceof FactoryBean<?> || bean instanceof ScopedObject) {
            return; // not a created singleton: its proxy cannot be inspected now
        }
        Method first = annotated.get(0);
        if (!(bean instanceof Advised advised) || !hasRateLimitAdvisor(advised)) {
            throw new InvalidRateLimitConfigurationException("@RateLimit on " + describe(userType, first)
                    + ": bean '" + name
                    + "' is not proxied by the rate-limit advisor, so its limits would never apply. "
                    + "Either no auto-proxy creator is active (spring.aop.auto=false without one of your own), or the "
                    + "bean was created before it (a BeanPostProcessor, or a bean one depends on). Keep Spring AOP's "
                    + "auto-proxying on, and move the limited methods to an ordinary bean.");
        }
        if (AopUtils.isJdkDynamicProxy(bean)) {
            for (Method method : annotated) {
                if (!declaredOnAnyOf(method, advised.getProxiedInterfaces())) {
                    throw new InvalidRateLimitConfigurationException("@RateLimit on " + describe(userType, method)
                            + ": bean '" + name
                            + "' is a JDK interface proxy, and no interface it exposes declares the "
                            + "method, so callers cannot reach it through the proxy and the limit would never apply. "
                            + "Declare the method in the interface, or use class-based proxies "
                            + "(spring.aop.proxy-target-class=true, Spring Boot's default).");
                }
            }
        }
    }

    private static boolean hasRateLimitAdvisor(Advised advised) {
        for (Advisor advisor : advised.getAdvisors()) {
            if (advisor instanceof RateLimitAdvisor) {
                return true;
            }
        }
        return false;
    }

    private static boolean declaredOnAnyOf(Method method, Class<?>[] interfaces) {
        for (Class<?> i : interfaces) {
            if (ClassUtils.hasMethod(i, method.getName(), method.getParameterTypes())) {
                return true;
            }
        }
        return false;
    }

    private static String describe(Class<?> type, Method method) {
        return type.getSimpleName() + "#" + method.getName()
                + Arrays.stream(method.getParameterTypes())
                        .map(Class::getSimpleName)
                        .collect(Collectors.joining(", ", "(", ")"));
    }

    public static boolean appliesTo(Method method, Class<?> targetClass) {
        Class<?> userType = ClassUtils.getUserClass(targetClass);
        Method specific = AopUtils.getMostSpecificMethod(method, userType);
        if (specific.getDeclaringClass() == Object.class || Modifier.isStatic(specific.getModifiers())) {
            return false;
        }
        return RateLimitAnnotations.isAnnotated(specific) || RateLimitAnnotations.isAnnotated(userType);
    }
}
