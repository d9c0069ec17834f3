package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.internal.config.RuleNameChecks;
import io.github.ratelimit.spring.boot.internal.method.CallPrincipal;
import io.github.ratelimit.spring.boot.internal.method.LazyLimiter;
import io.github.ratelimit.spring.boot.internal.method.MethodDecider;
import io.github.ratelimit.spring.boot.internal.method.RateLimitAdvisor;
import io.github.ratelimit.spring.boot.internal.method.RateLimitAnnotationValidator;
import io.github.ratelimit.spring.boot.internal.method.RateLimitMethodInterceptor;
import io.github.ratelimit.spring.boot.internal.method.SecurityPrincipal;
import io.github.ratelimit.spring.boot.internal.web.reactive.ReactiveMethodRateLimit;
import io.github.ratelimit.spring.boot.internal.web.servlet.ServletMethodRateLimit;
import io.github.ratelimit.spring.boot.internal.web.servlet.WebAccess;
import java.lang.reflect.Method;
import java.util.Arrays;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * Applies {@code @RateLimit} to any bean: a Spring AOP advisor (as for {@code @Transactional}), so no AspectJ weaver
 * is needed; infrastructure role, so Boot's auto-proxy creator applies it with or without AspectJ. At start-up, every
 * annotation is compiled and checked ({@link RateLimitAnnotationValidator}), and so are the keys of
 * {@code ratelimit.keys} against the rules that now exist.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
public final class RateLimitMethodAutoConfiguration {

    /**
     * The interceptor, with the {@link MethodDecider}s of the technologies present, in their order, and the sources
     * of the caller's name.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RateLimitMethodInterceptor rateLimitMethodInterceptor(
            ObjectProvider<RateLimiter> limiter,
            ObjectProvider<MethodDecider> deciders,
            ObjectProvider<CallPrincipal> principals) {
        return new RateLimitMethodInterceptor(
                new LazyLimiter(limiter),
                deciders.orderedStream().toList(),
                CallPrincipal.firstOf(principals.orderedStream().toList()));
    }

    /** Spring Security: the authenticated principal names the caller, before any request's user. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.security.core.context.SecurityContextHolder")
    static class SecurityPrincipalConfiguration {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @Order(0)
        static CallPrincipal rateLimitSecurityPrincipal() {
            return SecurityPrincipal::currentName;
        }
    }

    /**
     * Spring Web on a servlet container: calls made while a request is served are decided with it (its headers, the
     * filter's decision, its response), and its user names the caller.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.springframework.web.context.request.RequestContextHolder",
                "jakarta.servlet.http.HttpServletRequest"
            })
    static class ServletCallsConfiguration {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @Order(100)
        static CallPrincipal rateLimitRequestPrincipal() {
            WebAccess web = new WebAccess.Servlet();
            return () -> {
                var request = web.currentRequest();
                if (request == null) {
                    return null;
                }
                return request.getUserPrincipal() != null
                        ? request.getUserPrincipal().getName()
                        : request.getRemoteUser();
            };
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static ServletMethodRateLimit rateLimitServletMethodDecider(
                ObjectProvider<RateLimitSettings> settings,
                ObjectProvider<CallPrincipal> principals,
                ObjectProvider<RateLimitMethodInterceptor.Ends> ends) {
            return new ServletMethodRateLimit(
                    settings::getObject,
                    new WebAccess.Servlet(),
                    CallPrincipal.firstOf(principals.orderedStream().toList()),
                    ends.getIfAvailable());
        }
    }

    /** Project Reactor: methods returning a publisher are decided when subscribed to, without blocking. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "reactor.core.publisher.Mono")
    static class ReactiveCallsConfiguration {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static ReactiveMethodRateLimit rateLimitReactiveMethodDecider(
                ConfigurableListableBeanFactory beanFactory, ObjectProvider<RateLimitSettings> settings) {
            return ReactiveMethodRateLimit.create(beanFactory, settings::getObject);
        }

        /** Inside a servlet request, a method returning a publisher holds its call until the publisher ends. */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static RateLimitMethodInterceptor.Ends rateLimitPublisherEnds() {
            return ReactiveMethodRateLimit::endWhenDone;
        }
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static Advisor rateLimitAdvisor(ObjectProvider<RateLimitMethodInterceptor> interceptor) {
        StaticMethodMatcherPointcut pointcut = new StaticMethodMatcherPointcut() {
            @Override
            public boolean matches(Method method, Class<?> targetClass) {
                return RateLimitAnnotationValidator.appliesTo(method, targetClass);
            }
        };
        MethodInterceptor lazy = invocation -> interceptor.getObject().invoke(invocation);
        return new RateLimitAdvisor(pointcut, lazy);
    }

    @Bean
    static RateLimitAnnotationValidator rateLimitAnnotationValidator(
            ConfigurableListableBeanFactory beanFactory,
            ObjectProvider<RateLimitMethodInterceptor> interceptor,
            ObjectProvider<RateLimiter> limiter,
            ObjectProvider<RateLimitSettings> settings,
            Environment environment) {
        return new RateLimitAnnotationValidator(beanFactory, interceptor, () -> {
            RateLimitSettings s = settings.getObject();
            ForwardedHeadersCheck.check(environment, s, limiter.getObject(), beanFactory);
            // Every rule is known now (URL rules, and the annotations just compiled): keys must name real ones.
            // The limit store answers from ratelimit.keys for keys without an entry: those are checked all the same.
            boolean ownProvider = Arrays.stream(beanFactory.getBeanNamesForType(LimitProvider.class))
                    .anyMatch(name -> !name.equals(RateLimitLimitStoreAutoConfiguration.LIMIT_STORE_BEAN));
            if (s.limitProvider() != null && !ownProvider) {
                RuleNameChecks.checkKeyLimits(
                        s.limitProvider(), limiter.getObject().rules());
            }
            RuleNameChecks.checkPlanRules(
                    s.planFrom(), s.planRules(), limiter.getObject().rules());
        });
    }
}
