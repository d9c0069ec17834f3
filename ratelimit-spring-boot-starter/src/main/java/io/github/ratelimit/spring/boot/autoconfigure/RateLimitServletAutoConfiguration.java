package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.internal.web.Phase;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.servlet.ClientConnections;
import io.github.ratelimit.servlet.ProblemDetailsRejectionHandler;
import io.github.ratelimit.servlet.RateLimitFilter;
import io.github.ratelimit.servlet.RejectionHandler;
import io.github.ratelimit.servlet.tomcat.TomcatClientConnections;
import io.github.ratelimit.spring.boot.internal.method.SpelKeyResolverFactory;
import io.github.ratelimit.spring.boot.internal.web.servlet.AuthenticationFailureMarker;
import io.github.ratelimit.spring.boot.internal.web.servlet.MvcHandlerRulesFactory;
import io.github.ratelimit.spring.boot.internal.web.servlet.RateLimitExceptionResolver;
import jakarta.servlet.DispatcherType;
import java.util.List;
import java.util.Objects;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Servlet applications: the filters that decide URL rules (and, on Spring MVC, the handler's {@code @RateLimit}
 * rules in the same decision), the 429 response, and on Boot's embedded Tomcat a valve that lets a SOFT wait end when
 * its client goes away.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "jakarta.servlet.Filter")
public final class RateLimitServletAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RejectionHandler rateLimitRejectionHandler(RateLimitSettings settings) {
        return new ProblemDetailsRejectionHandler(settings.rejectStatus());
    }

    @Bean
    @ConditionalOnClass(name = "org.springframework.web.servlet.HandlerExceptionResolver")
    RateLimitExceptionResolver rateLimitExceptionResolver(RejectionHandler rejectionHandler) {
        return new RateLimitExceptionResolver(rejectionHandler);
    }

    /**
     * URL rules after authentication, and the {@code @RateLimit} rules of the Spring MVC handler that will serve
     * the request, in one decision.
     */
    @Bean
    @ConditionalOnMissingBean(name = "rateLimitFilter")
    FilterRegistrationBean<RateLimitFilter> rateLimitFilter(
            RateLimitSettings settings,
            RateLimiter limiter,
            RejectionHandler rejectionHandler,
            ConfigurableListableBeanFactory beanFactory,
            ObjectProvider<MvcHandlerRulesFactory> handlerRules,
            ObjectProvider<ClientConnections> connections) {
        FilterRegistrationBean<RateLimitFilter> registration = registration(
                "rateLimitFilter",
                settings.rules(Phase.AFTER_AUTHENTICATION),
                settings.filterOrder(),
                settings,
                limiter,
                rejectionHandler,
                beanFactory,
                connections);
        RateLimitFilter filter = Objects.requireNonNull(registration.getFilter(), "made with its filter");
        handlerRules.ifAvailable(factory -> {
            filter.handlerRules(factory.create());
            registration.setEnabled(true);
        });
        return registration;
    }

    /** URL rules that decide before Spring Security: limits on authentication attempts. */
    @Bean
    @ConditionalOnMissingBean(name = "rateLimitBeforeAuthenticationFilter")
    FilterRegistrationBean<RateLimitFilter> rateLimitBeforeAuthenticationFilter(
            RateLimitSettings settings,
            RateLimiter limiter,
            RejectionHandler rejectionHandler,
            ConfigurableListableBeanFactory beanFactory,
            ObjectProvider<ClientConnections> connections) {
        return registration(
                "rateLimitBeforeAuthenticationFilter",
                settings.rules(Phase.BEFORE_AUTHENTICATION),
                settings.beforeAuthenticationOrder(),
                settings,
                limiter,
                rejectionHandler,
                beanFactory,
                connections);
    }

    private static FilterRegistrationBean<RateLimitFilter> registration(
            String name,
            List<UrlRule> rules,
            int order,
            RateLimitSettings settings,
            RateLimiter limiter,
            RejectionHandler rejectionHandler,
            ConfigurableListableBeanFactory beanFactory,
            ObjectProvider<ClientConnections> connections) {
        SpelKeyResolverFactory.checkedForUrlRules(rules, beanFactory);
        RateLimitFilter.Builder builder = RateLimitFilter.builder(limiter)
                .headers(settings.headers())
                .rejectionHandler(rejectionHandler)
                .trustContainerForwarding(settings.trustContainerForwarding());
        rules.forEach(rule -> builder.urlRule(rule.rule(), rule.methods(), rule.paths()));
        if (rules.stream().anyMatch(rule -> rule.phase() == Phase.BEFORE_AUTHENTICATION)) {
            builder.beforeAuthentication();
        }
        RateLimitFilter filter = builder.build();
        // A SOFT wait whose client goes away ends, and returns its tokens, where the server can tell (Tomcat).
        connections.ifUnique(filter::clientConnections);
        FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setOrder(order);
        registration.setAsyncSupported(true);
        // ASYNC too: a SOFT delay resumes the request with an async dispatch, on which the filter lets it on
        // and settles rules that count only failures once it completes.
        registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
        registration.setEnabled(!rules.isEmpty());
        registration.setName(name);
        return registration;
    }

    /** Spring MVC: the handler's rules decide in the filter. */
    @Bean
    @ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
    static MvcHandlerRulesFactory rateLimitMvcHandlerRules(ConfigurableListableBeanFactory beanFactory) {
        return new MvcHandlerRulesFactory(beanFactory);
    }

    /** Marks a request whose authentication failed, for rules that count only failed attempts. */
    @Bean
    @ConditionalOnClass(name = "org.springframework.security.authentication.event.AbstractAuthenticationFailureEvent")
    static AuthenticationFailureMarker rateLimitAuthenticationFailureMarker() {
        return new AuthenticationFailureMarker();
    }

    /**
     * Boot's embedded Tomcat: a valve that lets the rate-limit filters see the client of a request waiting out a
     * {@code SOFT} delay go away, so its tokens come back ({@link TomcatClientConnections}). On another server the
     * valve is never installed, never sees a request, and the filters' waits run to their end. A
     * {@link ClientConnections} bean of the application's replaces it.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.apache.catalina.valves.ValveBase",
                "org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory"
            })
    static class TomcatConnectionsConfiguration {

        @Bean
        @ConditionalOnMissingBean(ClientConnections.class)
        static TomcatClientConnections rateLimitTomcatClientConnections() {
            return new TomcatClientConnections();
        }

        @Bean
        static WebServerFactoryCustomizer<TomcatServletWebServerFactory> rateLimitTomcatClientConnectionsValve(
                ObjectProvider<TomcatClientConnections> valve) {
            return factory -> valve.ifAvailable(factory::addContextValves);
        }
    }
}
