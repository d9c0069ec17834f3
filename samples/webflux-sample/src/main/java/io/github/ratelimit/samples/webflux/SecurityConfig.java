package io.github.ratelimit.samples.webflux;

import io.github.ratelimit.key.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * HTTP Basic: /api/me for any user (alice/alice, bob/bob), the Actuator endpoints but health for admin/admin,
 * everything else open. Spring Security checks a password sent to any path, open or not: the limits on password
 * guessing (application.properties) cover every path, and count the requests that send one.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfig {

    @Bean
    SecurityWebFilterChain security(ServerHttpSecurity http) {
        return http.authorizeExchange(a -> a.pathMatchers("/actuator/health", "/actuator/health/**")
                        .permitAll()
                        .pathMatchers("/actuator/**")
                        .hasRole("ADMIN")
                        .pathMatchers("/api/me")
                        .authenticated()
                        .anyExchange()
                        .permitAll())
                .httpBasic(Customizer.withDefaults())
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .build();
    }

    /**
     * The key {@code basic-credentials}: {@code basic} for a request that sends HTTP Basic credentials (which Spring
     * Security then checks, on any path), none for others. Rule {@code login-failures-by-address} counts by
     * {@code ip+basic-credentials} and skips requests without a key, so requests that send no password cost it
     * nothing and are never held up by it.
     */
    @Bean("basic-credentials")
    KeyResolver basicCredentials() {
        return request -> {
            String authorization = request.header("Authorization");
            // Any header that starts with "Basic": Spring Security's servlet converter reads "BasicX<credentials>" too.
            return authorization != null && authorization.strip().regionMatches(true, 0, "Basic", 0, 5)
                    ? "basic"
                    : null;
        };
    }

    @Bean
    MapReactiveUserDetailsService users() {
        return new MapReactiveUserDetailsService(
                User.withUsername("alice").password("{noop}alice").roles("USER").build(),
                User.withUsername("bob").password("{noop}bob").roles("USER").build(),
                User.withUsername("admin")
                        .password("{noop}admin")
                        .roles("ADMIN")
                        .build());
    }
}
