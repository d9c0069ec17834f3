package io.github.ratelimit.gateway;

import io.github.ratelimit.webflux.WebFluxApps;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;

/** A gateway application with real Boot auto-configuration, routing to an {@link Upstream}. */
final class GatewayApps {

    private GatewayApps() {}

    /** The gateway; its {@code KeyResolver}s: the client's address, and the {@code X-Tenant} header. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        /** The filter's default key, as a gateway application has one. */
        @Bean
        @Primary
        KeyResolver clientAddress() {
            return exchange -> Mono.just(
                            Objects.requireNonNull(exchange.getRequest().getRemoteAddress(), "remote address"))
                    .map(InetSocketAddress::getHostString);
        }

        @Bean
        KeyResolver tenant() {
            return exchange ->
                    Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Tenant"));
        }
    }

    /**
     * @param app the application: {@link App}, or one with more beans
     * @param upstream where the routes go
     * @param properties more properties
     * @return the running gateway: routes {@code hello} ({@code /api/hello}, client address, the rule named as the
     *         route) and {@code tenants} ({@code /api/tenants/**}, the tenant header, the rule {@code per-tenant})
     */
    static ConfigurableApplicationContext start(Class<? extends App> app, Upstream upstream, String... properties) {
        String routes = "spring.cloud.gateway.server.webflux.routes";
        List<String> all = new ArrayList<>(List.of(
                routes + "[0].id=hello",
                routes + "[0].uri=" + upstream.uri(),
                routes + "[0].predicates[0]=Path=/api/hello",
                routes + "[0].filters[0].name=RequestRateLimiter",
                routes + "[0].filters[0].args.key-resolver=#{@clientAddress}",
                routes + "[1].id=tenants",
                routes + "[1].uri=" + upstream.uri(),
                routes + "[1].predicates[0]=Path=/api/tenants/**",
                routes + "[1].filters[0].name=RequestRateLimiter",
                routes + "[1].filters[0].args.key-resolver=#{@tenant}",
                routes + "[1].filters[0].args.ratelimit.rules=per-tenant",
                "ratelimit.rules[0].name=hello",
                "ratelimit.rules[0].phase=gateway",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=5/1s",
                "ratelimit.rules[1].name=per-tenant",
                "ratelimit.rules[1].phase=gateway",
                "ratelimit.rules[1].key=gateway-key",
                "ratelimit.rules[1].limits=3/1m"));
        all.addAll(List.of(properties));
        return WebFluxApps.start(app, all.toArray(String[]::new));
    }

    static WebTestClient client(ConfigurableApplicationContext context) {
        return WebFluxApps.client(context);
    }
}
