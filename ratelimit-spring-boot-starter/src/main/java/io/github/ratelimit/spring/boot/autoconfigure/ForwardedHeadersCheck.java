package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.KeyExpressions;
import io.github.ratelimit.internal.config.RateLimitSettings;
import java.util.List;
import java.util.Locale;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.cloud.CloudPlatform;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Keeps the {@code ip} key's trust in proxies consistent with Spring Boot's forwarded-header handling, at start-up.
 *
 * <ul>
 *   <li>{@code server.forward-headers-strategy=framework}: Spring's {@code ForwardedHeaderFilter} rewrites the address
 *       from any peer's headers, in a request wrapper; the limiter reads beneath wrappers, so it still sees the
 *       connection and applies {@code ratelimit.trusted-proxies} itself. Consistent, nothing to do.</li>
 *   <li>{@code native} (set, or implied by a cloud platform such as Kubernetes, where Boot turns it on): the web
 *       server rewrites the address below the servlet API, trusting the proxies in its own settings (Tomcat's
 *       {@code server.tomcat.remoteip.internal-proxies}, by default every private address). The limiter cannot see
 *       the connection, so while a rule counts by {@code ip}, start-up stops and explains, unless
 *       {@code ratelimit.trust-container-forwarding=true} says the server's settings are the trust boundary.</li>
 *   <li>{@code trust-container-forwarding} with {@code framework}: Spring's filter believes every peer, so that is
 *       refused too.</li>
 * </ul>
 *
 * <p>On Spring WebFlux over Reactor Netty the limiter reads the connection's own address beneath both strategies
 * (Netty keeps it beside the forwarded one), so neither needs a check; but both Spring's
 * {@code ForwardedHeaderTransformer} and Netty's forwarded handling believe every peer, so
 * {@code trust-container-forwarding} with either is refused. On another reactive server the limiter sees what the
 * transformer left, so {@code framework} with an {@code ip} rule is refused too; the rest is checked as on a servlet
 * server.
 */
final class ForwardedHeadersCheck {

    private static final String NETTY_FACTORY = "org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory";

    private ForwardedHeadersCheck() {}

    static void check(
            Environment environment, RateLimitSettings settings, RateLimiter limiter, ListableBeanFactory beanFactory) {
        boolean servlet = beanFactory.containsBean("rateLimitFilter");
        boolean reactive = beanFactory.containsBean("rateLimitWebFilter");
        if (!servlet && !reactive) {
            return; // not a web application
        }
        String strategy = Binder.get(environment)
                .bind("server.forward-headers-strategy", String.class)
                .map(v -> v.trim().toUpperCase(Locale.ROOT).replace('-', '_'))
                .orElse(null);
        CloudPlatform platform = CloudPlatform.getActive(environment);
        boolean implied = strategy == null && platform != null && platform.isUsingForwardHeaders();
        boolean rewritesBelowServletApi = "NATIVE".equals(strategy) || implied;
        if (reactive && onNetty(beanFactory)) {
            if (settings.trustContainerForwarding() && ("FRAMEWORK".equals(strategy) || rewritesBelowServletApi)) {
                throw new InvalidRateLimitConfigurationException("ratelimit.trust-container-forwarding = true, but "
                        + "server.forward-headers-strategy = "
                        + (strategy != null
                                ? strategy.toLowerCase(Locale.ROOT)
                                : "native (implied by " + platform + ")")
                        + ": on Spring WebFlux, Spring's "
                        + "ForwardedHeaderTransformer and Reactor Netty's forwarded handling both believe the "
                        + "X-Forwarded-For of every peer, so every client could choose its own 'ip' key. Remove "
                        + "ratelimit.trust-container-forwarding and list your proxies in ratelimit.trusted-proxies: the "
                        + "limiter reads the connection's own address beneath either strategy.");
            }
            return;
        }
        if (reactive && "FRAMEWORK".equals(strategy) && !settings.trustContainerForwarding()) {
            // Off Netty the limiter sees the request as Spring's ForwardedHeaderTransformer left it: the address taken
            // from any peer's X-Forwarded-For, and the header removed.
            List<String> ipRules = limiter.rules().stream()
                    .filter(ForwardedHeadersCheck::keyedByAddress)
                    .map(Rule::source)
                    .toList();
            if (!ipRules.isEmpty()) {
                throw new InvalidRateLimitConfigurationException("server.forward-headers-strategy = framework on a "
                        + "reactive server other than Reactor Netty: Spring's ForwardedHeaderTransformer replaces each "
                        + "request's client address with any peer's X-Forwarded-For and removes the header before the "
                        + "rate limiter sees the request, so the 'ip' key of " + ipRules + " would count by an address "
                        + "clients choose. Run on Reactor Netty (the limiter then reads the connection's own address), "
                        + "or remove the strategy and list your proxies in ratelimit.trusted-proxies.");
            }
        }
        if (settings.trustContainerForwarding()) {
            if ("FRAMEWORK".equals(strategy)) {
                throw new InvalidRateLimitConfigurationException("ratelimit.trust-container-forwarding = true, but "
                        + "server.forward-headers-strategy = framework: Spring's ForwardedHeaderFilter believes the "
                        + "X-Forwarded-For of every peer, so every client could choose its own 'ip' key. Remove "
                        + "ratelimit.trust-container-forwarding and list your proxies in ratelimit.trusted-proxies (the "
                        + "limiter reads the connection beneath that filter), or use the native strategy with "
                        + "server.tomcat.remoteip.internal-proxies listing only your proxies.");
            }
            return;
        }
        if (!rewritesBelowServletApi) {
            return;
        }
        List<String> ipRules = limiter.rules().stream()
                .filter(ForwardedHeadersCheck::keyedByAddress)
                .map(Rule::source)
                .toList();
        if (ipRules.isEmpty()) {
            return;
        }
        String why = implied
                ? "Spring Boot turned on server.forward-headers-strategy=native because the application " + "runs on "
                        + platform
                : "server.forward-headers-strategy = native";
        throw new InvalidRateLimitConfigurationException(why + ", so the web server replaces each request's client "
                + "address with a value from X-Forwarded-For before the rate limiter sees it, believing the proxies in "
                + "its own settings (for Tomcat, server.tomcat.remoteip.internal-proxies: by default every private "
                + "address). The 'ip' key of " + ipRules + " would then count by an address those proxies' clients "
                + "can choose. Either set server.forward-headers-strategy=framework and list your proxies in "
                + "ratelimit.trusted-proxies (the limiter reads the connection beneath Spring's filter), or, if the "
                + "server's internal proxies are exactly your own, set ratelimit.trust-container-forwarding=true.");
    }

    private static boolean onNetty(ListableBeanFactory beanFactory) {
        ClassLoader loader = ForwardedHeadersCheck.class.getClassLoader();
        return ClassUtils.isPresent(NETTY_FACTORY, loader)
                && beanFactory.getBeanNamesForType(ClassUtils.resolveClassName(NETTY_FACTORY, loader), false, false)
                                .length
                        > 0;
    }

    /** @return whether the rule's key expression uses the client's address in any alternative ({@code user|ip}) */
    private static boolean keyedByAddress(Rule rule) {
        return KeyExpressions.atoms(rule.key()).contains("ip");
    }
}
