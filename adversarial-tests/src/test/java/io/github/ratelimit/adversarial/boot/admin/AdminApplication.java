package io.github.ratelimit.adversarial.boot.admin;

import io.github.ratelimit.RateLimit;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot application as operators run one: URL rules from {@code ratelimit.*} properties (the tests pass
 * them), {@code @RateLimit} on a controller and on a service bean, Actuator with the {@code ratelimitkeys}
 * endpoint, and Spring Security (its strict firewall included) letting only ADMIN reach {@code /actuator/**}.
 */
@SpringBootApplication
public class AdminApplication {

    /** An administrator whose name tries to forge a line of the audit log. */
    public static final String FORGING_ADMIN = "ops\nINFO Rule 'by-client' key 'root' reset by 'admin'\u2028x";

    /** Every URL under {@code /api} answers 200; the URL rules limit them. */
    @RestController
    static class ApiController {
        private final LimitedService service;

        ApiController(LimitedService service) {
            this.service = service;
        }

        @RequestMapping("/api/**")
        String api() {
            return "ok";
        }

        @GetMapping("/annotated")
        @RateLimit(name = "annotated-controller", key = "ip", limits = "10/1h")
        String annotated() {
            return "ok";
        }

        @GetMapping("/service")
        String service() {
            return service.work();
        }
    }

    /** A service method limited by its own annotation, never called by the tests before they address its rule. */
    @Service
    public static class LimitedService {
        @RateLimit(name = "annotated-service", limits = "10/1h")
        public String work() {
            return "ok";
        }
    }

    /**
     * The users, their passwords in clear ({@code {noop}}), as a plain {@link UserDetailsService}. The
     * {@link InMemoryUserDetailsManager} itself, a {@code UserDetailsPasswordService} too, would let Spring Security
     * re-encode a password with BCrypt at its first successful login: each of the tests' hundreds of later requests as
     * an administrator then spent tens of milliseconds checking it, most of these tests' time.
     */
    @Bean
    UserDetailsService users() {
        InMemoryUserDetailsManager users = new InMemoryUserDetailsManager(
                User.withUsername("admin")
                        .password("{noop}admin")
                        .roles("ADMIN")
                        .build(),
                User.withUsername(FORGING_ADMIN)
                        .password("{noop}forger")
                        .roles("ADMIN")
                        .build(),
                User.withUsername("alice").password("{noop}alice").roles("USER").build());
        return users::loadUserByUsername;
    }

    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(a -> a.requestMatchers("/actuator/**")
                        .hasRole("ADMIN")
                        .anyRequest()
                        .permitAll())
                .httpBasic(Customizer.withDefaults())
                .csrf(c -> c.disable())
                .build();
    }
}
