package io.github.ratelimit.adversarial.boot.login;

import java.security.Principal;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.security.authentication.event.AbstractAuthenticationFailureEvent;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot application with Spring Security's form login ({@code POST /login} with {@code username} and
 * {@code password}, redirecting to {@code /welcome} on success and to {@code /login?error} on failure) over users in an
 * {@code InMemoryUserDetailsManager}: alice and bob, whose passwords are {@code alice-secret} and {@code bob-secret}.
 */
@SpringBootApplication
public class LoginApplication {

    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(a -> a.anyRequest().authenticated())
                .formLogin(f -> f.defaultSuccessUrl("/welcome", true).permitAll())
                .csrf(c -> c.disable())
                .build();
    }

    /**
     * The users, their passwords in clear ({@code {noop}}), as a plain {@link UserDetailsService}. The
     * {@link InMemoryUserDetailsManager} itself, a {@code UserDetailsPasswordService} too, would let Spring Security
     * re-encode a password with BCrypt at its first successful login, and every later login of that user would spend
     * tens of milliseconds checking it.
     */
    @Bean
    UserDetailsService users() {
        InMemoryUserDetailsManager users = new InMemoryUserDetailsManager(
                User.withUsername("alice")
                        .password("{noop}alice-secret")
                        .roles("USER")
                        .build(),
                User.withUsername("bob")
                        .password("{noop}bob-secret")
                        .roles("USER")
                        .build());
        return users::loadUserByUsername;
    }

    @RestController
    static class WelcomeController {
        @GetMapping("/welcome")
        String welcome(Principal principal) {
            return "welcome " + principal.getName();
        }
    }

    /** The user names of the failed logins Spring Security checked: every attempt that reached it and failed. */
    @Component
    public static class FailedLogins implements ApplicationListener<AbstractAuthenticationFailureEvent> {
        private final List<String> names = new CopyOnWriteArrayList<>();

        @Override
        public void onApplicationEvent(AbstractAuthenticationFailureEvent event) {
            names.add(String.valueOf(event.getAuthentication().getName()));
        }

        public List<String> names() {
            return names;
        }

        public int count() {
            return names.size();
        }

        /** Forgets the failed logins so far: a test that shares the application counts its own. */
        public void clear() {
            names.clear();
        }
    }
}
