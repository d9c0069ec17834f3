package io.github.ratelimit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MapLimitProviderTest {

    private final Rule byUser = Rule.builder("api").key("user").limits("2/1s").build();
    private final Rule byApiKey = Rule.builder("keys").key("header:X-Api-Key").limits("2/1s").build();

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
        assertThatThrownBy(() -> MapLimitProvider.builder().source("ratelimit.keys").plan("free", "1/1s")
                .assign("user:alice", "gold"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("ratelimit.keys: key 'user:alice' is assigned plan 'gold', which is not defined. "
                        + "Defined plans: [free]. Define the plan first.");
        assertThatThrownBy(() -> MapLimitProvider.builder().limits("alice", "1/1s"))
                .hasMessage("MapLimitProvider: key 'alice' is not of the form '<key expression>:<key>'. Write it like "
                        + "'user:241531' or 'header:X-Api-Key:k-42'.");
        assertThatThrownBy(() -> MapLimitProvider.builder().plan("free", "1/x"))
                .hasMessageStartingWith("MapLimitProvider: plan 'free': limits[0]: invalid limit '1/x'");
        assertThatThrownBy(() -> MapLimitProvider.builder().plan("free"))
                .hasMessage("MapLimitProvider: plan 'free': no limit is given. Give at least one, e.g. '5/1s'.");
    }
}
