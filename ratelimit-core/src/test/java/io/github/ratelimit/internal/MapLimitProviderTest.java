package io.github.ratelimit.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Guard;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import org.junit.jupiter.api.Test;

class MapLimitProviderTest {

    private final Rule byUser = Rule.builder("api").key("user").limits("2/1s").build();
    private final Rule byApiKey =
            Rule.builder("keys").key("header:X-Api-Key").limits("2/1s").build();

    @Test
    void answersKeysByPlanAndByTheirOwnLimits() {
        MapLimitProvider provider = MapLimitProvider.builder()
                .plan("free", "10/1m")
                .plan("paid", "1000/1m", "20/1s")
                .assign("user:alice", "paid")
                .limits("user:241531", "5/1s")
                .limits("header:X-Api-Key:k-42", "7/1s")
                .build();
        assertThat(provider.limitsFor(byUser, "alice")).containsExactly(Limit.parse("1000/1m"), Limit.parse("20/1s"));
        assertThat(provider.limitsFor(byUser, "241531")).containsExactly(Limit.parse("5/1s"));
        assertThat(provider.limitsFor(byUser, "bob")).isNull();
        assertThat(provider.limitsFor(byApiKey, "k-42")).containsExactly(Limit.parse("7/1s"));
        assertThat(provider.limitsFor(byApiKey, "alice")).isNull();
        assertThat(provider.size()).isEqualTo(3);
    }

    @Test
    void rejectsUnknownPlansAndMalformedKeys() {
        assertThatThrownBy(() -> MapLimitProvider.builder()
                        .source("ratelimit.keys")
                        .plan("free", "1/1s")
                        .assign("user:alice", "gold"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("ratelimit.keys: key 'user:alice' is assigned a plan that is not defined: plan 'gold' is "
                        + "not known; known plans: [free]. Define the plan first.");
        assertThatThrownBy(() -> MapLimitProvider.builder().limits("alice", "1/1s"))
                .hasMessage(
                        "LimitProvider.builder(): key 'alice' is not of the form '<key expression>:<key>'. Write it like "
                                + "'user:241531' or 'header:X-Api-Key:k-42'.");
        assertThatThrownBy(() -> MapLimitProvider.builder().plan("free", "1/x"))
                .hasMessageStartingWith("LimitProvider.builder(): plan 'free': limits[0]: invalid limit '1/x'");
        assertThatThrownBy(() -> MapLimitProvider.builder().plan("free"))
                .hasMessage("LimitProvider.builder(): plan 'free': no limit is given. Give at least one, e.g. '5/1s'.");
    }

    @Test
    void anEntryNamingRulesAppliesToThoseRulesOnly() {
        Rule export = Rule.builder("export").key("user").limits("2/1m").build();
        Rule search = Rule.builder("search").key("user").limits("10/1m").build();
        MapLimitProvider provider = MapLimitProvider.builder()
                .plan("paid", "20/1s")
                .assign("user:alice", "paid", java.util.List.of("api", "search"))
                .limits("user:alice", java.util.List.of("export"), "5/1m")
                .limits("user:bob", "3/1s")
                .build();
        assertThat(provider.limitsFor(byUser, "alice")).containsExactly(Limit.parse("20/1s"));
        assertThat(provider.limitsFor(search, "alice")).containsExactly(Limit.parse("20/1s"));
        assertThat(provider.limitsFor(export, "alice")).containsExactly(Limit.parse("5/1m"));
        assertThat(provider.limitsFor(export, "bob"))
                .as("no rules named: every rule keyed by user")
                .containsExactly(Limit.parse("3/1s"));
        Rule other = Rule.builder("other").key("user").limits("1/1m").build();
        assertThat(provider.limitsFor(other, "alice"))
                .as("a rule no entry names keeps its own")
                .isNull();
    }

    @Test
    void anEntryForOneRuleWinsOverOneForEveryRule() {
        Rule export = Rule.builder("export").key("user").limits("2/1m").build();
        MapLimitProvider provider = MapLimitProvider.builder()
                .limits("user:alice", "20/1s")
                .limits("user:alice", java.util.List.of("export"), "2/1m")
                .build();
        assertThat(provider.limitsFor(byUser, "alice")).containsExactly(Limit.parse("20/1s"));
        assertThat(provider.limitsFor(export, "alice")).containsExactly(Limit.parse("2/1m"));
    }

    @Test
    void aKeyGivenTwiceForOneRuleIsRefused() {
        assertThatThrownBy(() -> MapLimitProvider.builder()
                        .source("ratelimit.keys[1].limits")
                        .limits("user:alice", java.util.List.of("api", "export"), "1/1s")
                        .limits("user:alice", java.util.List.of("export"), "2/1s"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("ratelimit.keys[1].limits: key 'user:alice' has limits for rule(s) [export] already, from "
                        + "ratelimit.keys[1].limits. Give each key one entry per rule.");
        assertThatThrownBy(() ->
                        MapLimitProvider.builder().limits("user:alice", "1/1s").limits("user:alice", "2/1s"))
                .hasMessageContaining("has limits for every rule already");
    }

    @Test
    void namesOfRulesThatDoNotExistOrCountByAnotherKeyAreRefusedOnceTheRulesAreKnown() {
        MapLimitProvider typo = MapLimitProvider.builder()
                .source("ratelimit.keys[0].limits")
                .limits("user:alice", java.util.List.of("apj"), "1/1s")
                .build();
        assertThatThrownBy(() -> typo.checkRules(java.util.List.of(byUser, byApiKey)))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("ratelimit.keys[0].limits: key 'user:alice' names rule 'apj', which does not exist, so the "
                        + "limits would never apply. Name one of the rules [api, keys].");
        MapLimitProvider otherKey = MapLimitProvider.builder()
                .source("ratelimit.keys[0].limits")
                .limits("user:alice", java.util.List.of("keys"), "1/1s")
                .build();
        assertThatThrownBy(() -> otherKey.checkRules(java.util.List.of(byUser, byApiKey)))
                .hasMessage("ratelimit.keys[0].limits: key 'user:alice' names rule 'keys', which counts by "
                        + "'header:X-Api-Key', so the limits would never apply. Write the key as "
                        + "'header:X-Api-Key:<value>', or name a rule that counts by the key's expression.");
        MapLimitProvider.builder()
                .limits("user:alice", java.util.List.of("api"), "1/1s")
                .build()
                .checkRules(java.util.List.of(byUser));
        Rule slots = Rule.builder("exports").key("user").concurrency(2).build();
        MapLimitProvider forSlots = MapLimitProvider.builder()
                .source("ratelimit.keys[0].limits")
                .limits("user:alice", java.util.List.of("exports"), "1/1s")
                .build();
        assertThatThrownBy(() -> forSlots.checkRules(java.util.List.of(byUser, slots)))
                .hasMessage("ratelimit.keys[0].limits: key 'user:alice' names rule 'exports', a rule of calls in "
                        + "flight (concurrency 2), which has no windows for limits to replace. Name rules of windows "
                        + "only; a key's calls in flight follow the rule's concurrency.");
        // An entry for every rule leaves a concurrency rule alone.
        MapLimitProvider.builder().limits("user:alice", "1/1s").build().checkRules(java.util.List.of(byUser, slots));
    }

    @Test
    void anEntryOfPropertiesNamesThePropertyAtFault() {
        MapLimitProvider typo = MapLimitProvider.builder()
                .plan("pro", "1/1s")
                .entry("ratelimit.keys[0]")
                .assign("user:alice", "pro", java.util.List.of("apj"))
                .build();
        assertThatThrownBy(() -> typo.checkRules(java.util.List.of(byUser)))
                .hasMessageStartingWith("ratelimit.keys[0].rules: key 'user:alice' names rule 'apj', which does not");
        assertThat(typo.keysNoRuleCounts(java.util.List.of(byApiKey)))
                .containsExactly("ratelimit.keys[0].key: user:alice");
        assertThatThrownBy(() ->
                        MapLimitProvider.builder().entry("ratelimit.keys[0]").limits("alice", "1/1s"))
                .hasMessageStartingWith("ratelimit.keys[0].key: key 'alice' is not of the form");
        assertThatThrownBy(() ->
                        MapLimitProvider.builder().entry("ratelimit.keys[0]").assign("user:alice", "gold"))
                .hasMessageStartingWith("ratelimit.keys[0].plan: key 'user:alice' is assigned a plan that is not "
                        + "defined: plan 'gold' is not known");
        assertThatThrownBy(() ->
                        MapLimitProvider.builder().entry("ratelimit.keys[0]").limits("user:alice", "1/x"))
                .hasMessageStartingWith("ratelimit.keys[0].limits: key 'user:alice': limits[0]: invalid limit '1/x'");
        assertThatThrownBy(() -> MapLimitProvider.builder()
                        .entry("ratelimit.keys[0]")
                        .limits("user:alice", java.util.List.of(" "), "1/1s"))
                .hasMessage(
                        "ratelimit.keys[0].rules: key 'user:alice' names a blank rule. Name each rule, e.g. 'api'.");
        assertThatThrownBy(() -> MapLimitProvider.builder()
                        .entry("rules.properties: ratelimit.keys[0]")
                        .limits("user:alice", "1/1s")
                        .entry("rules.properties: ratelimit.keys[1]")
                        .limits("user:alice", "2/1s"))
                .hasMessage("rules.properties: ratelimit.keys[1]: key 'user:alice' has limits for every rule already, "
                        + "from ratelimit.keys[0]. Give each key one entry per rule.");
    }

    @Test
    void aRuleKeyedByAlternativesTakesTheEntriesOfTheAlternativeThatResolved() {
        Rule userOrIp = Rule.builder("api").key("user|ip").limits("2/1s").build();
        MapLimitProvider provider = MapLimitProvider.builder()
                .limits("user:alice", "20/1s")
                .limits("ip:203.0.113.7", "9/1s")
                .build();
        assertThat(provider.limitsFor(userOrIp, "user=alice")).containsExactly(Limit.parse("20/1s"));
        assertThat(provider.limitsFor(userOrIp, "ip=203.0.113.7")).containsExactly(Limit.parse("9/1s"));
        assertThat(provider.limitsFor(userOrIp, "ip=alice")).isNull();
        assertThat(provider.limitsFor(userOrIp, "header:X-Client=alice")).isNull();
        MapLimitProvider.builder()
                .limits("user:alice", java.util.List.of("api"), "1/1s")
                .build()
                .checkRules(java.util.List.of(userOrIp));
    }

    @Test
    void aLimiterAppliesAKeysEntryToTheRulesItNamesAndToAlternatives() {
        MapLimitProvider provider = MapLimitProvider.builder()
                .plan("pro", "3/1h")
                .assign("user:alice", "pro", java.util.List.of("api"))
                .build();
        try (RateLimiter limiter = RateLimiter.builder()
                .limitProvider(provider, java.time.Duration.ofMinutes(1))
                .build()) {
            Guard api = limiter.guard(
                    Rule.builder("api").key("user|ip").limits("1/1h").build());
            Guard export = limiter.guard(
                    Rule.builder("export").key("user").limits("1/1h").build());
            RequestContext alice = RequestContext.builder()
                    .principal("alice")
                    .remoteAddress("203.0.113.7")
                    .build();
            for (int i = 0; i < 3; i++) {
                assertThat(api.acquire(alice).permitted()).as("api call %d", i).isTrue();
            }
            assertThat(api.acquire(alice).permitted()).isFalse();
            assertThat(export.acquire(alice).permitted()).isTrue();
            assertThat(export.acquire(alice).permitted())
                    .as("export keeps its own 1/1h")
                    .isFalse();
        }
    }

    /**
     * A key over 128 characters is counted by its hash: an entry written with the key in full applies to it, as one
     * written with the hash does (it never matched: a 1/1h entry for a 200-character API key let 5 of 5 through).
     */
    @Test
    void anEntryWrittenWithALongKeyInFullAppliesToTheKeysHash() {
        String apiKey = "k".repeat(200);
        MapLimitProvider provider = MapLimitProvider.builder()
                .limits("header:X-Api-Key:" + apiKey, java.util.List.of("api"), "1/1h")
                .build();
        try (RateLimiter limiter = RateLimiter.builder()
                .limitProvider(provider, java.time.Duration.ofMinutes(1))
                .build()) {
            Guard api = limiter.guard(
                    Rule.builder("api").key("header:X-Api-Key").limits("5/1h").build());
            RequestContext client =
                    RequestContext.builder().header("X-Api-Key", apiKey).build();
            assertThat(api.acquire(client).permitted()).isTrue();
            assertThat(api.acquire(client).permitted())
                    .as("the entry's 1/1h, not the rule's 5/1h")
                    .isFalse();
            RequestContext other = RequestContext.builder()
                    .header("X-Api-Key", "j".repeat(200))
                    .build();
            for (int i = 0; i < 5; i++) {
                assertThat(api.acquire(other).permitted())
                        .as("another long key keeps the rule's limits")
                        .isTrue();
            }
        }
    }

    @Test
    void keysNoDeclaredRuleCountsByAreListedForAWarning() {
        MapLimitProvider provider = MapLimitProvider.builder()
                .source("ratelimit.keys[0].limits")
                .limits("usr:alice", "1/1s")
                .limits("user:bob", "1/1s")
                .limits("ip:203.0.113.7", "1/1s")
                .build();
        Rule userOrIp = Rule.builder("api").key("user|ip").limits("2/1s").build();
        assertThat(provider.keysNoRuleCounts(java.util.List.of(byUser, byApiKey)))
                .containsExactly("ratelimit.keys[0].limits: ip:203.0.113.7", "ratelimit.keys[0].limits: usr:alice");
        assertThat(provider.keysNoRuleCounts(java.util.List.of(userOrIp)))
                .containsExactly("ratelimit.keys[0].limits: usr:alice");
    }

    @Test
    void anEntryForOtherRulesDoesNotHideTheAlternativesEntry() {
        Rule userOrIp = Rule.builder("api").key("user|ip").limits("2/1s").build();
        MapLimitProvider provider = MapLimitProvider.builder()
                .limits("user|ip:user=alice", java.util.List.of("other"), "1/1h")
                .limits("user:alice", "20/1s")
                .build();
        assertThat(provider.limitsFor(userOrIp, "user=alice")).containsExactly(Limit.parse("20/1s"));
    }
}
