package io.github.ratelimit.spring.boot;

import static io.github.ratelimit.spring.boot.StartupFailures.configError;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.servlet.RateLimitFilter;
import io.github.ratelimit.servlet.testing.TomcatServer;
import jakarta.servlet.http.HttpServlet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * One configuration model behind both entry points: the same {@code ratelimit.*} properties, in a web.xml filter's
 * rules file and in Spring Boot, give the same rules, the same responses and the same decisions; a typo stops both,
 * naming the nearest known property.
 */
class OneConfigurationModelTest {

    /** Every kind of value both entry points read: lists, enums, durations, plans, keys, rules in both phases. */
    private static final Map<String, String> PROPERTIES = new LinkedHashMap<>();

    static {
        PROPERTIES.put("ratelimit.store", "local");
        PROPERTIES.put("ratelimit.local.maximum-keys", "5000");
        PROPERTIES.put("ratelimit.default-store-failure-policy", "fail-closed");
        PROPERTIES.put("ratelimit.local-fallback-share", "0.5");
        PROPERTIES.put("ratelimit.max-waiting", "50");
        PROPERTIES.put("ratelimit.near-limit", "0.3");
        PROPERTIES.put("ratelimit.trusted-proxies", "10.0.0.0/8, 192.168.0.1");
        PROPERTIES.put("ratelimit.forwarded-header", "forwarded");
        PROPERTIES.put("ratelimit.ipv6-prefix-length", "56");
        PROPERTIES.put("ratelimit.headers", "x-ratelimit");
        PROPERTIES.put("ratelimit.reject-status", "503");
        PROPERTIES.put("ratelimit.log-shadow", "false");
        PROPERTIES.put("ratelimit.limit-cache-ttl", "30s");
        PROPERTIES.put("ratelimit.plans.pro", "10/1m, 100/1h");
        PROPERTIES.put("ratelimit.keys[0].key", "user:bob");
        PROPERTIES.put("ratelimit.keys[0].plan", "pro");
        PROPERTIES.put("ratelimit.keys[1].key", "user:eve");
        PROPERTIES.put("ratelimit.keys[1].limits", "1/1h");
        PROPERTIES.put("ratelimit.keys[1].rules", "api");
        PROPERTIES.put("ratelimit.rules[0].name", "api");
        PROPERTIES.put("ratelimit.rules[0].paths", "/api/**, /v2/**");
        PROPERTIES.put("ratelimit.rules[0].methods", "GET, post");
        PROPERTIES.put("ratelimit.rules[0].key", "user|ip");
        PROPERTIES.put("ratelimit.rules[0].limits", "3/1m, 100/1h");
        PROPERTIES.put("ratelimit.rules[0].on-missing-key", "skip");
        PROPERTIES.put("ratelimit.rules[1].name", "export");
        PROPERTIES.put("ratelimit.rules[1].paths", "/export");
        PROPERTIES.put("ratelimit.rules[1].limits", "2/100ms");
        PROPERTIES.put("ratelimit.rules[1].mode", "soft");
        PROPERTIES.put("ratelimit.rules[1].max-delay", "150ms");
        PROPERTIES.put("ratelimit.rules[1].max-waiting", "7");
        PROPERTIES.put("ratelimit.rules[1].cost", "2");
        PROPERTIES.put("ratelimit.rules[1].algorithm", "sliding-window-log");
        PROPERTIES.put("ratelimit.rules[2].algorithm", "sliding-window-counter");
        PROPERTIES.put("ratelimit.rules[2].name", "logins");
        PROPERTIES.put("ratelimit.rules[2].paths", "/login");
        PROPERTIES.put("ratelimit.rules[2].key", "form-user");
        PROPERTIES.put("ratelimit.rules[2].limits", "5/1m");
        PROPERTIES.put("ratelimit.rules[2].block-for", "15m");
        PROPERTIES.put("ratelimit.rules[2].count", "failures");
        PROPERTIES.put("ratelimit.rules[2].phase", "before-authentication");
        PROPERTIES.put("ratelimit.rules[2].on-store-failure", "fail-open");
    }

    private final WebApplicationContextRunner boot = new WebApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of(AopAutoConfiguration.class));

    private static String[] pairs(Map<String, String> properties) {
        return properties.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .toArray(String[]::new);
    }

    /** What a limiter decides for a scripted series of calls: the outcome and basis of every verdict. */
    private static List<String> script(RateLimiter limiter, List<Rule> rules) {
        List<String> seen = new ArrayList<>();
        for (Rule rule : rules) {
            Guard guard = limiter.guard(rule);
            for (String user : List.of("alice", "bob", "eve")) {
                for (int i = 0; i < 4; i++) {
                    Decision d = guard.acquireAsync(RequestContext.builder()
                                    .principal(user)
                                    .remoteAddress("10.0.0.9")
                                    .header("Forwarded", "for=203.0.113.7")
                                    .parameter("username", user)
                                    .build())
                            .join();
                    seen.add(rule.name() + " " + user + " "
                            + d.verdicts().stream()
                                    .map(v -> v.outcome() + "/" + v.basis() + "/" + v.key())
                                    .collect(Collectors.joining(",")));
                }
            }
        }
        return seen;
    }

    /** A rule's every setting but where it was declared (a file, or Spring's properties). */
    private static List<String> describe(List<UrlRule> rules) {
        return rules.stream().map(r -> r + " " + r.rule()).toList();
    }

    /** The URL rules' rules in name order, as a limiter lists the rules registered on it. */
    private static List<Rule> byName(List<UrlRule> rules) {
        return rules.stream()
                .map(UrlRule::rule)
                .sorted(Comparator.comparing(Rule::name))
                .toList();
    }

    /** The limiter a filter configured from its rules file publishes for the application's own servlets. */
    private static RateLimiter publishedLimiter(TomcatServer server) {
        return (RateLimiter)
                server.context().getServletContext().getAttribute(RateLimitFilter.LIMITER_ATTRIBUTE + ".rateLimit");
    }

    private static final class Ok extends HttpServlet {}

    @Test
    void theSamePropertiesGiveTheSameRulesResponsesAndDecisionsInBothEntryPoints(@TempDir Path dir) throws Exception {
        Path rulesFile = dir.resolve("ratelimit.properties");
        Files.writeString(
                rulesFile,
                PROPERTIES.entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining("\n")));
        RateLimitFilter filter = new RateLimitFilter(); // as web.xml declares it: configured by its init-params
        try (TomcatServer server = TomcatServer.builder()
                .filter(filter)
                .filterParam("config", "file:" + rulesFile)
                .servlet("ok", new Ok(), "/*")
                .start()) {
            RateLimiter fileLimiter = publishedLimiter(server);
            List<Rule> fileRules = fileLimiter.rules();
            List<String> fileDecisions = script(fileLimiter, fileRules);
            // What the filter read from the file, path patterns and methods included, is what the rules file's parser
            // gives; the filter's limiter holds the same rules.
            List<UrlRule> parsed = RateLimitSettings.parse(
                            PROPERTIES, null, RateLimitSettings.EntryPoint.SERVLET_FILTER)
                    .rules();
            assertThat(fileRules.stream().map(Rule::toString).toList())
                    .isEqualTo(byName(parsed).stream().map(Rule::toString).toList());

            boot.withPropertyValues(pairs(PROPERTIES)).run(context -> {
                assertThat(context).hasNotFailed();
                RateLimitSettings settings = context.getBean(RateLimitSettings.class);
                assertThat(describe(settings.rules())).isEqualTo(describe(parsed));
                assertThat(settings.headers())
                        .containsExactly(io.github.ratelimit.RateLimitHeaders.HeaderStyle.X_RATELIMIT);
                assertThat(settings.rejectStatus()).isEqualTo(503);
                assertThat(script(context.getBean(RateLimiter.class), byName(settings.rules())))
                        .isEqualTo(fileDecisions);
            });
        }
    }

    /**
     * {@code ratelimit.plan-header-trusted} reaches the limiter through both faces: a plan header from a peer that is
     * no trusted proxy (203.0.113.5; the proxies are 10.0.0.0/8) is ignored without it and believed with it.
     */
    @ParameterizedTest
    @CsvSource({"false, 3", "true, 10"})
    void aPlanHeaderIsBelievedAlikeInBothEntryPoints(boolean headerTrusted, int admitted, @TempDir Path dir)
            throws Exception {
        Map<String, String> properties = new LinkedHashMap<>(PROPERTIES);
        properties.put("ratelimit.plan-from", "header:X-Plan");
        properties.put("ratelimit.plan-header-trusted", String.valueOf(headerTrusted));
        Path rulesFile = dir.resolve("ratelimit.properties");
        Files.writeString(
                rulesFile,
                properties.entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining("\n")));
        RateLimitFilter filter = new RateLimitFilter();
        try (TomcatServer server = TomcatServer.builder()
                .filter(filter)
                .filterParam("config", "file:" + rulesFile)
                .servlet("ok", new Ok(), "/*")
                .start()) {
            RateLimiter fileLimiter = publishedLimiter(server);
            List<Boolean> fromFile = planScript(fileLimiter, fileLimiter.rules());
            assertThat(fromFile.stream().filter(b -> b).count())
                    .as("plan-header-trusted=" + headerTrusted)
                    .isEqualTo(admitted);
            boot.withPropertyValues(pairs(properties))
                    .run(context -> assertThat(planScript(
                                    context.getBean(RateLimiter.class),
                                    byName(context.getBean(RateLimitSettings.class)
                                            .rules())))
                            .isEqualTo(fromFile));
        }
    }

    /** Twelve calls of rule 'api' by alice, from a peer that is no trusted proxy, naming plan pro. */
    private static List<Boolean> planScript(RateLimiter limiter, List<Rule> rules) {
        Guard api = limiter.guard(
                rules.stream().filter(r -> r.name().equals("api")).findFirst().orElseThrow());
        List<Boolean> permitted = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            permitted.add(api.acquire(RequestContext.builder()
                            .principal("alice")
                            .remoteAddress("203.0.113.5")
                            .header("X-Plan", "pro")
                            .build())
                    .permitted());
        }
        return permitted;
    }

    @Test
    void yamlStyleIndexedListsBindLikeCommaSeparatedOnes() {
        Map<String, String> indexed = new LinkedHashMap<>(PROPERTIES);
        indexed.remove("ratelimit.rules[0].limits");
        indexed.put("ratelimit.rules[0].limits[0]", "3/1m");
        indexed.put("ratelimit.rules[0].limits[1]", "100/1h");
        indexed.remove("ratelimit.plans.pro");
        indexed.put("ratelimit.plans.pro[0]", "10/1m");
        indexed.put("ratelimit.plans.pro[1]", "100/1h");
        RateLimitSettings fromFile =
                RateLimitSettings.parse(PROPERTIES, null, RateLimitSettings.EntryPoint.SERVLET_FILTER);
        boot.withPropertyValues(pairs(indexed))
                .run(context -> assertThat(
                                context.getBean(RateLimitSettings.class).rules())
                        .isEqualTo(fromFile.rules()));
    }

    @Test
    void typosStopStartUpNamingTheNearestKnownProperty() {
        ApplicationContextRunner runner =
                new ApplicationContextRunner().withConfiguration(StarterAutoConfigurations.of());
        runner.withPropertyValues("ratelimit.redis.ulr=redis://localhost:6379")
                .run(context -> assertThat(configError(context))
                        .hasMessage("unknown property 'ratelimit.redis.ulr'. Did you mean "
                                + "'ratelimit.redis.url'? Every property: docs/properties.md."));
        runner.withPropertyValues("ratelimit.stor=redis")
                .run(context ->
                        assertThat(configError(context)).hasMessageContaining("Did you mean 'ratelimit.store'?"));
        runner.withPropertyValues(
                        "ratelimit.rules[0].paths=/x",
                        "ratelimit.rules[0].limits=1/1s",
                        "ratelimit.rules[0].mehtods=GET")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining(
                                "'ratelimit.rules[0].mehtods'. Did you mean " + "'ratelimit.rules[0].methods'?"));
        runner.withPropertyValues("ratelimit.default-store-failure-polcy=fail-closed")
                .run(context -> assertThat(configError(context))
                        .hasMessageContaining("Did you mean " + "'ratelimit.default-store-failure-policy'?"));
        runner.withPropertyValues("ratelimit.key-resolvers.tenant=com.example.Tenant")
                .run(context -> assertThat(configError(context))
                        .hasMessage("'ratelimit.key-resolvers.tenant' is a setting of the "
                                + "web.xml filter's rules file, not of Spring Boot. In Spring Boot, declare a KeyResolver bean: "
                                + "its bean name is the key's name."));
    }

    /**
     * A mistake stops both entry points with one message: a misspelt property of a URL rule that leaves the rule with
     * no property Spring could bind (which Spring alone would report as "left unbound"), a value from a list written
     * wrong (listed as the docs write the values), a value of the wrong kind, a plan source that is none of the forms.
     */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "ratelimit.rules[3].limts | 5/1s | unknown property 'ratelimit.rules[3].limts'. Did you mean "
                        + "'ratelimit.rules[3].limits'? Every property: <page>.",
                "ratelimit.rules[1].on-store-failure | fail-opn | ratelimit.rules[1].on-store-failure: 'fail-opn' is not "
                        + "one of [default, fail-open, fail-closed, local-fallback]. Use one of them.",
                "ratelimit.default-store-failure-policy | FAIL_CLOSD | ratelimit.default-store-failure-policy: "
                        + "'FAIL_CLOSD' is not one of [fail-open, fail-closed, local-fallback]. Use one of them.",
                "ratelimit.redis.command-timeout | soon | ratelimit.redis.command-timeout: 'soon' is not a duration. Use "
                        + "<number><unit> with unit ms, s, m, h or d, e.g. '500ms', '1s', '1m'.",
                "ratelimit.rules[1].cost | two | ratelimit.rules[1].cost: 'two' is not a whole number. Write digits, e.g. 1.",
                "ratelimit.rules[1].block-for | 2d | ratelimit.rules[1].block-for: '2d' is longer than the allowed 1d. "
                        + "Use a block of at most 1d.",
                "ratelimit.rules[1].block-for | 0s | ratelimit.rules[1].block-for: '0s' is not positive. Use a positive "
                        + "duration, e.g. '500ms'.",
                "ratelimit.plan-from | heder:X-Plan | <plan-from>"
            })
    void aMistakeStopsBothEntryPointsWithOneMessage(String property, String value, String expected, @TempDir Path dir)
            throws Exception {
        Map<String, String> typo = new LinkedHashMap<>(PROPERTIES);
        typo.put(property, value);
        String message = expected.replace("<plan-from>", PLAN_FROM);
        bothStopWith(
                typo,
                dir,
                message.replace("<page>", "docs/properties.md"),
                message.replace("<page>", "docs/properties.md"));
    }

    /** Starts a web.xml filter on a rules file of these properties, and Spring Boot on them: both must fail so. */
    private void bothStopWith(Map<String, String> properties, Path dir, String fileMessage, String bootMessage)
            throws Exception {
        Path rulesFile = dir.resolve("ratelimit.properties");
        Files.writeString(
                rulesFile,
                properties.entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining("\n")));
        RecordingFilter filter = new RecordingFilter();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> TomcatServer.builder()
                        .filter(filter)
                        .filterParam("config", "file:" + rulesFile)
                        .servlet("ok", new Ok(), "/*")
                        .start()
                        .close())
                .hasMessageContaining("failed to start");
        assertThat(filter.failure)
                .hasMessage("RateLimitFilter 'rateLimit' cannot start: file:" + rulesFile + ": " + fileMessage);
        boot.withPropertyValues(pairs(properties))
                .run(context -> assertThat(configError(context)).hasMessage(bootMessage));
    }

    private static final String PLAN_FROM =
            "ratelimit.plan-from: unknown key 'heder:X-Plan'. Write where a call's plan "
                    + "comes from as header:<Name> (believed only from ratelimit.trusted-proxies), a custom key (a KeyResolver), "
                    + "authority:<prefix> (Spring Boot with Spring Security: authority PLAN_pro selects plan pro) or a SpEL "
                    + "expression over #request (Spring Boot).";

    @Test
    void relaxedNamesOfKnownPropertiesAreFine() {
        new ApplicationContextRunner()
                .withConfiguration(StarterAutoConfigurations.of())
                .withPropertyValues(
                        "ratelimit.maxWaiting=20",
                        "ratelimit.rules[0].paths=/x",
                        "ratelimit.rules[0].limits=1/1s",
                        "ratelimit.rules[0].maxDelay=1s",
                        "ratelimit.rules[0].mode=SOFT")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(RateLimitSettings.class)
                                    .rules()
                                    .get(0)
                                    .rule()
                                    .maxDelay())
                            .hasSeconds(1);
                });
    }

    /**
     * A mistake in {@code ratelimit.keys} stops both entry points with one message, which names the property at
     * fault: {@code .rules} for a rule name no rule has, {@code .key} for a key that is not {@code <expression>:<key>},
     * {@code .plan} for a plan not defined, the entry for a key given twice. ({@code <none>} removes the property.)
     */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "ratelimit.keys[1].rules | apj | ratelimit.keys[1].rules: key 'user:eve' names rule 'apj', which does not "
                        + "exist, so the limits would never apply. Name one of the rules [api, export, logins].",
                "ratelimit.keys[1].rules | logins | ratelimit.keys[1].rules: key 'user:eve' names rule 'logins', which "
                        + "counts by 'form-user', so the limits would never apply. Write the key as 'form-user:<value>', "
                        + "or name a rule that counts by the key's expression.",
                "ratelimit.keys[1].key | eve | ratelimit.keys[1].key: key 'eve' is not of the form '<key expression>:<key>'. "
                        + "Write it like 'user:241531' or 'header:X-Api-Key:k-42'.",
                "ratelimit.keys[0].plan | gold | ratelimit.keys[0].plan: key 'user:bob' is assigned a plan that is not "
                        + "defined: plan 'gold' is not known; known plans: [pro]. Define the plan first.",
                "ratelimit.keys[1].limits | 1/1x | ratelimit.keys[1].limits: key 'user:eve': limits[0]: invalid limit "
                        + "'1/1x': period '1x' is not a duration. Expected '<permits>/<period>' with an optional ' "
                        + "burst=<capacity>', e.g. '5/1s', '100/1m' or '5/1s burst=20'.",
                "ratelimit.keys[1].rules | <none> | ratelimit.keys[2]: key 'user:eve' has limits for every rule already, "
                        + "from ratelimit.keys[1]. Give each key one entry per rule."
            })
    void aMistakeInKeysStopsBothEntryPointsNamingItsProperty(
            String property, String value, String expected, @TempDir Path dir) throws Exception {
        Map<String, String> typo = new LinkedHashMap<>(PROPERTIES);
        // A second entry for user:eve, for every rule: harmless beside one for rule 'api' only.
        typo.put("ratelimit.keys[2].key", "user:eve");
        typo.put("ratelimit.keys[2].limits", "2/1h");
        if (value.equals("<none>")) {
            typo.remove(property);
        } else {
            typo.put(property, value);
        }
        bothStopWith(typo, dir, expected, expected);
    }

    /** A rate-limit filter that keeps why it could not start. */
    static final class RecordingFilter extends RateLimitFilter {
        volatile jakarta.servlet.ServletException failure;

        @Override
        public void init(jakarta.servlet.FilterConfig config) throws jakarta.servlet.ServletException {
            try {
                super.init(config);
            } catch (jakarta.servlet.ServletException e) {
                failure = e;
                throw e;
            }
        }
    }
}
