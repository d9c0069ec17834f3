package io.github.ratelimit.spring.boot;

import static io.github.ratelimit.spring.boot.StartupFailures.configError;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * A URL rule is decided before any method runs: its SpEL key may read the request and beans, and a key that needs
 * a method's arguments stops start-up instead of finding no key on every request. (That {@code #request} keys
 * count as they should is shown over HTTP in {@link OneDecisionPerRequestTest}.)
 */
class UrlRuleSpelKeysTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of())
            .withPropertyValues("ratelimit.rules[0].paths=/api/**", "ratelimit.rules[0].limits=5/1s");

    @Test
    void aKeyReadingMethodArgumentsStopsStartUp() {
        runner.withPropertyValues("ratelimit.rules[0].key=#userId").run(context -> {
            Throwable error = configError(context);
            assertThat(error)
                    .hasMessage("ratelimit.rules[0].key: key '#userId' refers to #userId, but a URL rule is "
                            + "decided before any method runs: its key can refer to #request, #exchange and to beans (@name) only. Use "
                            + "#request (e.g. \"#request.getHeader('X-Tenant')\"), or move the rule to a @RateLimit on the "
                            + "method whose arguments it needs.");
        });
        runner.withPropertyValues("ratelimit.rules[0].key=#root.toString()")
                .run(context ->
                        assertThat(configError(context)).hasMessageContaining("refers to #root, but a URL rule"));
    }

    @Test
    void aKeyReadingTheRootObjectStopsStartUp() {
        runner.withPropertyValues("ratelimit.rules[0].key='tenant:' + tenant")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining(
                                "refers to 'tenant' of the root object, which a " + "URL rule does not have"));
        runner.withPropertyValues("ratelimit.rules[0].key=#request.getHeader(headerName())")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("refers to 'headerName()' of the root object"));
    }

    @Test
    void aKeyNamingABeanThatDoesNotExistStopsStartUp() {
        runner.withPropertyValues("ratelimit.rules[0].key=@tenants.of(#request)")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("refers to bean @tenants, which does not exist"));
    }

    @Test
    void aKeyReadingTheRequestStarts() {
        runner.withPropertyValues("ratelimit.rules[0].key=#request.getHeader('X-Tenant')")
                .run(context -> assertThat(context).hasNotFailed());
        runner.withPropertyValues("ratelimit.rules[0].key='t:' + #request.getHeader('X-Tenant').toLowerCase()")
                .run(context -> assertThat(context).hasNotFailed());
    }
}
