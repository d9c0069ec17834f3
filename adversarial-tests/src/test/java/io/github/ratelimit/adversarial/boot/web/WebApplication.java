package io.github.ratelimit.adversarial.boot.web;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small Spring Boot web application, as users write one: a controller that tells the client address it sees, Spring
 * Security present (and open), and rate limits from {@code ratelimit.*} properties the tests pass.
 */
@SpringBootApplication
public class WebApplication {

    /** Answers every request under {@code /api} with the client address the application sees. */
    @RestController
    static class AddressController {
        @RequestMapping("/api/**")
        String address(HttpServletRequest request) {
            return request.getRemoteAddr();
        }
    }

    /** No users: nobody logs in here (and Boot generates no password). */
    @Bean
    UserDetailsService noUsers() {
        return new InMemoryUserDetailsManager();
    }

    @Bean
    SecurityFilterChain open(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(a -> a.anyRequest().permitAll())
                .csrf(c -> c.disable())
                .build();
    }
}
