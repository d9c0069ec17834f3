package io.github.ratelimit.spring.boot.charging;

import static io.github.ratelimit.spring.boot.StartupFailures.configError;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimit;
import io.github.ratelimit.Rule.Counted;
import io.github.ratelimit.spring.boot.StarterAutoConfigurations;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/** What charging by size and by outcome refuses at start-up, with a message that says where and how to fix it. */
class ChargingConfigurationTest {

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of())
            .withPropertyValues("ratelimit.rules[0].paths=/api/**", "ratelimit.rules[0].limits=5/1s");

    private final ApplicationContextRunner beans =
            new ApplicationContextRunner().withConfiguration(StarterAutoConfigurations.of(AopAutoConfiguration.class));

    @Test
    void aStatusSetThatIsNoneStopsStartUp() {
        web.withPropertyValues("ratelimit.rules[0].count=statuses:404,4x4")
                .run(context -> assertThat(configError(context))
                        .hasMessage("ratelimit.rules[0].count: 'statuses:404,4x4' is no status "
                                + "set: '4x4' is neither a status code from 100 to 599 nor a class from 1xx to 5xx. Write codes "
                                + "and classes separated by commas, e.g. '404,5xx'."));
        web.withPropertyValues("ratelimit.rules[0].count=statuses:")
                .run(context -> assertThat(configError(context)).hasMessageContaining("no status is given"));
        web.withPropertyValues("ratelimit.rules[0].count=sometimes")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("ratelimit.rules[0].count")
                        .hasMessageContaining("[all, failures, statuses:<codes>]"));
    }

    @Test
    void aUrlRulesPermitsMayReadOnlyTheRequest() {
        web.withPropertyValues("ratelimit.rules[0].permits=#items.size()")
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("ratelimit.rules[0].permits: permits "
                                + "'#items.size()' refers to #items, but a URL rule is decided before any method runs: its "
                                + "permits can refer to #request, #exchange and to beans (@name) only"));
        web.withPropertyValues("ratelimit.rules[0].permits=header:X-Items+header:Y")
                .run(context -> assertThat(configError(context)).hasMessageContaining("combines parts with '+'"));
        web.withPropertyValues("ratelimit.rules[0].permits=itemz")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("permits")
                        .hasMessageContaining("'itemz'"));
        web.withPropertyValues(
                        "ratelimit.rules[0].permits=header:X-Items", "ratelimit.rules[0].algorithm=sliding-window-log")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("SLIDING_WINDOW_LOG")
                        .hasMessageContaining("ratelimit.rules[0]"));
        web.withPropertyValues("ratelimit.rules[0].permits=#request.getHeader('X-Items')")
                .run(context -> assertThat(context).hasNotFailed());
    }

    static class UnknownPermits {
        @RateLimit(name = "p", perMinute = 10, permits = "#itemz.size()")
        public String call(java.util.List<String> items) {
            return "x";
        }
    }

    static class BadPermitsSyntax {
        @RateLimit(name = "p", perMinute = 10, permits = "#items.size(")
        public String call(java.util.List<String> items) {
            return "x";
        }
    }

    static class StatusesOnAMethod {
        @RateLimit(name = "s", perMinute = 10, count = Counted.STATUSES)
        public String call() {
            return "x";
        }
    }

    static class PermitsOnALog {
        @RateLimit(name = "l", perMinute = 10, permits = "#n", algorithm = Algorithm.SLIDING_WINDOW_LOG)
        public String call(int n) {
            return "x";
        }
    }

    static class ChargeFromABean {
        @RateLimit(name = "c", perMinute = 10, charge = "@tokenCounter.count(#result)")
        String call() {
            return "x";
        }
    }

    /** A charge is evaluated once the call has returned, without the beans: a charge naming one stops start-up. */
    @Test
    void aChargeThatNamesABeanStopsStartUp() {
        beans.withBean(ChargeFromABean.class)
                .withBean("tokenCounter", Object.class, Object::new)
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("ChargeFromABean#call()")
                        .hasMessageContaining("refers to bean @tokenCounter"));
    }

    @Test
    void anAnnotationsPermitsIsCheckedLikeItsKey() {
        beans.withBean(UnknownPermits.class)
                .run(context -> assertThat(configError(context))
                        .hasMessage(
                                "@RateLimit on UnknownPermits#call(List): permits '#itemz.size()' refers to #itemz, which a call of "
                                        + "this method does not provide, so no call would have a value. Available: [#items, #p0, #a0, "
                                        + "#args, #request, #exchange, #root, #this]. Refer to one of them."));
        beans.withBean(BadPermitsSyntax.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith(
                                "@RateLimit on BadPermitsSyntax#call(List): permits '#items.size(' is not a "
                                        + "valid SpEL expression")
                        .hasMessageContaining("'#items.size()'"));
        beans.withBean(StatusesOnAMethod.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("StatusesOnAMethod#call()")
                        .hasMessageContaining("count STATUSES names no status"));
        beans.withBean(PermitsOnALog.class)
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("PermitsOnALog#call(int)")
                        .hasMessageContaining("SLIDING_WINDOW_LOG"));
    }
}
