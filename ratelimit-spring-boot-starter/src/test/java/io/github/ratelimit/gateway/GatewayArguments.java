package io.github.ratelimit.gateway;

import java.util.Map;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.convert.support.DefaultConversionService;

/**
 * What the gateway does with a route's filter arguments, without the rest of the gateway. Kept out of the test
 * classes' signatures: the tests without the gateway on the class path find those classes too, and must be able to
 * read their methods.
 */
final class GatewayArguments {

    private GatewayArguments() {}

    /** Registers what binds a route's arguments, as the gateway's own auto-configuration does. */
    static void registerBinding(GenericApplicationContext context) {
        context.registerBean(
                ConfigurationService.class,
                () -> new ConfigurationService(
                        new DefaultListableBeanFactory(), DefaultConversionService::getSharedInstance, () -> null));
    }

    /** Tells a rate limiter of a route's arguments, as the gateway does when it builds the route. */
    static void publish(Object rateLimiter, String routeId, Map<String, Object> args) {
        ((AbstractRateLimiter<?>) rateLimiter).onApplicationEvent(new FilterArgsEvent(rateLimiter, routeId, args));
    }
}
