package io.github.ratelimit.spring.boot.charging;

import static io.github.ratelimit.spring.boot.StartupFailures.configError;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.spring.boot.StarterAutoConfigurations;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/** What plans from the request ({@code ratelimit.plan-from}) refuse at start-up, and where the message points. */
class PlansConfigurationTest {

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of(AopAutoConfiguration.class))
            .withPropertyValues(
                    "ratelimit.rules[0].name=api",
                    "ratelimit.rules[0].paths=/api/**",
                    "ratelimit.rules[0].key=user",
                    "ratelimit.rules[0].limits=5/1s");

    @Test
    void aPlanSourceWithoutPlansStopsStartUp() {
        web.withPropertyValues("ratelimit.plan-from=header:X-Plan")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("ratelimit.plan-from: 'header:X-Plan' names "
                                + "where a call's plan comes from, but no plan is defined"));
    }

    @Test
    void planRulesMustNameRulesThatExist() {
        web.withPropertyValues(
                        "ratelimit.plans.pro=10/1s",
                        "ratelimit.plan-from=header:X-Plan",
                        "ratelimit.trusted-proxies=10.0.0.0/8",
                        "ratelimit.plan-rules=apy")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("ratelimit.plan-rules")
                        .hasMessageContaining("'apy'")
                        .hasMessageContaining("[api]"));
        web.withPropertyValues("ratelimit.plan-rules=api")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("ratelimit.plan-rules")
                        .hasMessageContaining("without ratelimit.plan-from"));
    }

    @Test
    void aPlanARuleCannotUseOrABadSourceStopsStartUp() {
        web.withPropertyValues("ratelimit.plans.pro=10/1s", "ratelimit.plan-from=authority:")
                .run(context -> assertThat(configError(context)).hasMessageContaining("names no authority prefix"));
        web.withPropertyValues("ratelimit.plans.pro=10/1s", "ratelimit.plan-from=hedaer:X-Plan")
                .run(context -> assertThat(configError(context)).hasMessageContaining("hedaer:X-Plan"));
        web.withPropertyValues(
                        "ratelimit.plans.huge=20000/1m",
                        "ratelimit.plan-from=header:X-Plan",
                        "ratelimit.plan-header-trusted=true",
                        "ratelimit.rules[0].algorithm=sliding-window-log",
                        "ratelimit.rules[0].limits=10/1m")
                .run(context -> assertThat(configError(context)).hasMessageContaining("plan 'huge'"));
        web.withPropertyValues("ratelimit.plans.pro=10/1s", "ratelimit.plan-from=authority:PLAN_")
                .run(context -> assertThat(context).hasNotFailed());
        web.withPropertyValues(
                        "ratelimit.plans.pro=10/1s",
                        "ratelimit.plan-from=header:X-Plan",
                        "ratelimit.trusted-proxies=10.0.0.0/8",
                        "ratelimit.rules[0].key=ip")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("ratelimit.plan-from")
                        .hasMessageContaining("no rule does")
                        .hasMessageContaining("ratelimit.plan-rules"));
        web.withPropertyValues("ratelimit.rules[0].key=authority:PLAN_")
                .run(context -> assertThat(configError(context)).hasMessageContaining("unknown key 'authority:PLAN_'"));
    }

    /** The header any client can send is believed from a trusted proxy only: without one, start-up says so. */
    @Test
    void aPlanHeaderWithNoTrustedProxyStopsStartUp() {
        web.withPropertyValues("ratelimit.plans.pro=10/1s", "ratelimit.plan-from=header:X-Plan")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith(
                                "ratelimit.plan-from: 'header:X-Plan' takes "
                                        + "the plan from the request header X-Plan, which any client can send, and no proxy is trusted "
                                        + "to set it (ratelimit.trusted-proxies is empty), so the header would be believed from anyone")
                        .hasMessageContaining("List the proxies that set the header in ratelimit.trusted-proxies")
                        .hasMessageContaining("say so with ratelimit.plan-header-trusted=true"));
        web.withPropertyValues(
                        "ratelimit.plans.pro=10/1s",
                        "ratelimit.plan-from=header:X-Plan",
                        "ratelimit.trusted-proxies=10.0.0.0/8")
                .run(context -> assertThat(context).hasNotFailed());
        web.withPropertyValues(
                        "ratelimit.plans.pro=10/1s",
                        "ratelimit.plan-from=header:X-Plan",
                        "ratelimit.plan-header-trusted=true")
                .run(context -> assertThat(context).hasNotFailed());
        web.withPropertyValues("ratelimit.plans.pro=10/1s", "ratelimit.plan-from=#request.getHeader('X-Plan')")
                .run(context -> assertThat(context)
                        .as("SpEL reads what its author chose")
                        .hasNotFailed());
        web.withPropertyValues("ratelimit.plan-header-trusted=true")
                .run(context -> assertThat(configError(context))
                        .hasMessage(
                                "ratelimit.plan-header-trusted: 'true' is set without ratelimit.plan-from. Remove it, or say "
                                        + "which header names the plan, e.g. ratelimit.plan-from=header:X-Plan."));
    }
}
