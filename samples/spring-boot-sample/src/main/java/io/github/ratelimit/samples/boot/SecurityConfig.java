package io.github.ratelimit.samples.boot;

import io.github.ratelimit.key.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * HTTP Basic: /api/me for any user (alice/alice, bob/bob, carol/carol), the Actuator endpoints but health for admin/admin
 * (the ratelimits endpoint lists user names and client addresses), everything else open. Spring Security checks a
 * password sent to any path, open or not: the limits on password guessing (application.properties) cover every
 * path, and count the requests that send one.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfig {

    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(a -> a.requestMatchers("/actuator/health", "/actuator/health/**")
                        .permitAll()
                        .requestMatchers("/actuator/**")
                        .hasRole("ADMIN")
                        .requestMatchers("/api/me")
                        .authenticated()
                        .anyRequest()
                        .permitAll())
                .httpBasic(Customizer.withDefaults())
                .csrf(c -> c.disable())
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
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("alice").password("{noop}alice").roles("USER").build(),
                User.withUsername("bob").password("{noop}bob").roles("USER").build(),
                // carol's plan comes with her: the authority PLAN_pro (ratelimit.plan-from=authority:PLAN_).
                User.withUsername("carol")
                        .password("{noop}carol")
                        .authorities("ROLE_USER", "PLAN_pro")
                        .build(),
                User.withUsername("admin")
                        .password("{noop}admin")
                        .roles("ADMIN")
                        .build());
    }
}
