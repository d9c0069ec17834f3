package io.github.ratelimit.internal.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class UrlGuardsTest {

    private final RateLimiter limiter = RateLimiter.builder().build();
    private final UrlRule api = UrlRule.of(Rule.builder("api").limits("10/1s").build(), List.of("/api/**"), Set.of());
    private final UrlRule posts =
            UrlRule.of(Rule.builder("posts").limits("1/1s").build(), List.of("/api/posts"), Set.of("POST"));
    private final UrlGuards<Guard> guards = new UrlGuards<>(limiter, List.of(api, posts), g -> g);

    @Test
    void theUrlRulesThatMatchAndTheHandlersRulesAreOneGuardCompiledOnce() {
        Rule handler = Rule.builder("handler").limits("5/1s").build();
        Guard get = guards.forRequest("GET", "/api/posts", List.of());
        Guard post = guards.forRequest("POST", "/api/posts", List.of(handler));
        assertThat(get.rules()).extracting(Rule::name).containsExactly("api");
        assertThat(post.rules()).extracting(Rule::name).containsExactlyInAnyOrder("api", "posts", "handler");
        assertThat(guards.forRequest("POST", "/api/posts", List.of(handler))).isSameAs(post);
        assertThat(guards.forRequest("GET", "/other", List.of())).isNull();
        assertThat(guards.forRequest("GET", "/other", List.of(handler)).rules())
                .extracting(Rule::name)
                .containsExactly("handler");
    }

    @Test
    void beyondTheCachedCombinationsEveryRequestStillGetsItsRules() {
        for (int i = 0; i < UrlGuards.MAX_CACHED + 10; i++) {
            Rule handler = Rule.builder("h" + i).limits("5/1s").build();
            assertThat(guards.forRequest("GET", "/api/x", List.of(handler)).rules())
                    .extracting(Rule::name)
                    .containsExactly("api", "h" + i);
        }
    }
}
