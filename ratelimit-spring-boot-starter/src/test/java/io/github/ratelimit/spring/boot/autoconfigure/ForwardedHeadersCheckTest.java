package io.github.ratelimit.spring.boot.autoconfigure;

import static io.github.ratelimit.spring.boot.StartupFailures.configError;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.spring.boot.StarterAutoConfigurations;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * Start-up keeps the {@code ip} key consistent with Spring Boot's forwarded-header handling: a web server that
 * rewrites client addresses below the servlet API (native strategy, set or implied by a cloud platform) stops
 * start-up while a rule counts by {@code ip}, unless the server's forwarding is declared the trust boundary.
 */
class ForwardedHeadersCheckTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of(AopAutoConfiguration.class));

    private final WebApplicationContextRunner ipRule = runner.withPropertyValues(
            "ratelimit.rules[0].name=api",
            "ratelimit.rules[0].paths=/api/**",
            "ratelimit.rules[0].key=user|ip",
            "ratelimit.rules[0].limits=5/1s");

    public static class Annotated {
        @RateLimit(name = "annotated", key = "ip", perSecond = 5)
        public String call() {
            return "ok";
        }
    }

    @Test
    void theNativeStrategyWithAnIpRuleStopsStartUp() {
        ipRule.withPropertyValues("server.forward-headers-strategy=native")
                .run(context -> assertThat(configError(context))
                        .hasMessage(
                                "server.forward-headers-strategy = native, so the web server replaces each request's client "
                                        + "address with a value from X-Forwarded-For before the rate limiter sees it, believing the "
                                        + "proxies in its own settings (for Tomcat, server.tomcat.remoteip.internal-proxies: by default "
                                        + "every private address). The 'ip' key of [ratelimit.rules[0]] would then count by an address "
                                        + "those proxies' clients can choose. Either set server.forward-headers-strategy=framework and "
                                        + "list your proxies in ratelimit.trusted-proxies (the limiter reads the connection beneath "
                                        + "Spring's filter), or, if the server's internal proxies are exactly your own, set "
                                        + "ratelimit.trust-container-forwarding=true."));
    }

    @Test
    void aCloudPlatformThatImpliesTheNativeStrategyStopsStartUpForAnAnnotatedIpRule() {
        runner.withPropertyValues("spring.main.cloud-platform=kubernetes")
                .withBean(Annotated.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("Spring Boot turned on "
                                + "server.forward-headers-strategy=native because the application runs on KUBERNETES, so the "
                                + "web server replaces")
                        .hasMessageContaining("The 'ip' key of [@RateLimit on Annotated#call()]"));
    }

    @Test
    void trustingTheServersForwardingStartsWithTheNativeStrategy() {
        ipRule.withPropertyValues("server.forward-headers-strategy=native", "ratelimit.trust-container-forwarding=true")
                .run(context -> assertThat(context).hasNotFailed());
        runner.withPropertyValues("spring.main.cloud-platform=kubernetes", "ratelimit.trust-container-forwarding=true")
                .withBean(Annotated.class)
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void theFrameworkStrategyIsConsistentAsItIsButCannotBeTrusted() {
        ipRule.withPropertyValues("server.forward-headers-strategy=framework")
                .run(context -> assertThat(context).hasNotFailed());
        ipRule.withPropertyValues(
                        "server.forward-headers-strategy=framework", "ratelimit.trust-container-forwarding=true")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("ratelimit.trust-container-"
                                + "forwarding = true, but server.forward-headers-strategy = framework: Spring's "
                                + "ForwardedHeaderFilter believes the X-Forwarded-For of every peer"));
    }

    @Test
    void theNativeStrategyWithoutIpRulesStarts() {
        runner.withPropertyValues(
                        "server.forward-headers-strategy=native",
                        "ratelimit.rules[0].paths=/api/**",
                        "ratelimit.rules[0].limits=5/1s")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void twoTrustListsAreRefused() {
        ipRule.withPropertyValues("ratelimit.trust-container-forwarding=true", "ratelimit.trusted-proxies=10.0.0.0/8")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("ratelimit.trust-container-"
                                + "forwarding: 'true' while ratelimit.trusted-proxies is set too"));
    }

    /** A reactive server that is not Reactor Netty (no Netty server factory here) sees what Spring's transformer left. */
    @Test
    void theFrameworkStrategyOnAReactiveServerOtherThanNettyWithAnIpRuleStopsStartUp() {
        org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner reactive =
                new org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner()
                        .withConfiguration(StarterAutoConfigurations.of(AopAutoConfiguration.class))
                        .withPropertyValues(
                                "ratelimit.rules[0].name=api",
                                "ratelimit.rules[0].paths=/api/**",
                                "ratelimit.rules[0].key=user|ip",
                                "ratelimit.rules[0].limits=5/1s");
        reactive.withPropertyValues("server.forward-headers-strategy=framework")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith(
                                "server.forward-headers-strategy = framework on a reactive server other than Reactor Netty")
                        .hasMessageContaining("[ratelimit.rules[0]]"));
        reactive.run(context -> assertThat(context).as("no strategy").hasNotFailed());
    }
}
