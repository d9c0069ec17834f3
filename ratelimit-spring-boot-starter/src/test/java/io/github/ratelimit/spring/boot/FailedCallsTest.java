package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.Rule.Counted;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code count = Counted.FAILURES} on a method: calls that throw keep their tokens, calls that return do not. */
class FailedCallsTest {

    public static class Login {
        @RateLimit(name = "logins", key = "#user", perMinute = 3, count = Counted.FAILURES)
        public String login(String user, String password) {
            if (!user.equals(password)) {
                throw new IllegalArgumentException("bad credentials");
            }
            return "welcome " + user;
        }
    }

    @Test
    void onlyCallsThatThrowCountAgainstTheLimit() {
        new ApplicationContextRunner()
                .withConfiguration(StarterAutoConfigurations.of(AopAutoConfiguration.class))
                .withBean(Login.class)
                .run(context -> {
                    Login login = context.getBean(Login.class);
                    for (int i = 0; i < 20; i++) {
                        assertThat(login.login("alice", "alice")).isEqualTo("welcome alice");
                    }
                    for (int i = 0; i < 3; i++) {
                        assertThatThrownBy(() -> login.login("alice", "guess"))
                                .isInstanceOf(IllegalArgumentException.class);
                    }
                    assertThatThrownBy(() -> login.login("alice", "alice"))
                            .isInstanceOf(RateLimitExceededException.class);
                    assertThat(login.login("bob", "bob")).isEqualTo("welcome bob");
                });
    }
}
