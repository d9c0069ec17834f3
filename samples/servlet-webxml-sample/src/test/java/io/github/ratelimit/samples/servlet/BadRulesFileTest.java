package io.github.ratelimit.samples.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A bad rules file fails deployment in the filter's init, with a message that says where and how to fix it. */
class BadRulesFileTest {

    private final List<Throwable> logged = new CopyOnWriteArrayList<>();
    private final Logger catalina = Logger.getLogger("org.apache.catalina");
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getThrown() != null) {
                logged.add(record.getThrown());
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    @BeforeEach
    void listen() {
        catalina.addHandler(capture);
    }

    @AfterEach
    void stopListening() {
        catalina.removeHandler(capture);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "ratelimit.rules[0].limits | 100/x | RateLimitFilter 'rateLimit' cannot start: /WEB-INF/ratelimit.properties: "
                        + "ratelimit.rules[0]: limits[0]: invalid limit '100/x': period 'x' is not a duration.",
                "ratelimit.rules[1].key | usr | RateLimitFilter 'rateLimit' cannot start: /WEB-INF/ratelimit.properties: "
                        + "ratelimit.rules[1]: unknown key 'usr'. Available: [basic-credentials, basic-user, form-user[:<parameter>], global, header:<name>, ip, param:<name>, user].",
                "ratelimit.rules[0].mode | hardest | RateLimitFilter 'rateLimit' cannot start: /WEB-INF/ratelimit.properties: "
                        + "ratelimit.rules[0].mode: 'hardest' is not one of [hard, soft, shadow]. Use one of them.",
                "ratelimit.rules[0].limts | 5/1s | RateLimitFilter 'rateLimit' cannot start: /WEB-INF/ratelimit.properties: "
                        + "unknown property 'ratelimit.rules[0].limts'. Did you mean 'ratelimit.rules[0].limits'?",
                "ratelimit.store | memcached | RateLimitFilter 'rateLimit' cannot start: /WEB-INF/ratelimit.properties: "
                        + "ratelimit.store: 'memcached' is not one of [auto, local, redis]. Use one of them.",
                "ratelimit.keys[0].rules | mee | RateLimitFilter 'rateLimit' cannot start: /WEB-INF/ratelimit.properties: "
                        + "ratelimit.keys[0].rules: key 'user:bob' names rule 'mee', which does not exist, so the limits "
                        + "would never apply. Name one of the rules [",
                "ratelimit.redis.url | ${NO_SUCH_VARIABLE_FOR_TEST} | RateLimitFilter 'rateLimit' cannot start: "
                        + "/WEB-INF/ratelimit.properties: ratelimit.redis.url refers to ${NO_SUCH_VARIABLE_FOR_TEST}"
            })
    void failsDeploymentNamingThePropertyAndTheFix(String property, String value, String message) {
        assertThatThrownBy(() -> SampleServer.start(0, Map.of(property, value)).close())
                .hasMessageContaining("failed to start");
        assertThat(logged).anySatisfy(t -> assertThat(t).hasMessageStartingWith(message));
    }
}
