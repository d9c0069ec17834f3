package io.github.ratelimit.samples.gateway;

import java.net.InetSocketAddress;
import java.util.Optional;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;

/**
 * The routes. {@code hello} carries the gateway's {@code RequestRateLimiter} filter; its rate limiter is the one the
 * starter configures (the primary {@code RateLimiter}), which decides the rule named as the route, {@code hello}
 * ({@code phase=gateway} in {@code application.properties}). {@code api} forwards the rest of {@code /api/**},
 * limited only by the URL rule {@code site}, which the library's WebFlux filter decides before any route.
 */
@Configuration(proxyBeanMethods = false)
class GatewayRoutes {

    /**
     * The gateway's key for the filter: the client's address. The filter refuses a request without a key (403)
     * before asking the limiter; the rule {@code hello} counts by the library's own {@code ip} key, which believes
     * forwarding headers only from {@code ratelimit.trusted-proxies}.
     */
    @Bean
    KeyResolver clientAddress() {
        return exchange -> Mono.justOrEmpty(
                Optional.ofNullable(exchange.getRequest().getRemoteAddress()).map(InetSocketAddress::getHostString));
    }

    @Bean
    RouteLocator routes(RouteLocatorBuilder builder, DisposableServer upstreamServer, KeyResolver clientAddress) {
        String upstream = "http://127.0.0.1:" + upstreamServer.port();
        return builder.routes()
                .route(
                        "hello",
                        r -> r.path("/api/hello")
                                .filters(f -> f.requestRateLimiter(c -> c.setKeyResolver(clientAddress)))
                                .uri(upstream))
                .route("api", r -> r.path("/api/**").uri(upstream))
                .build();
    }
}
