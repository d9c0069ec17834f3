package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rules that keep their tokens only for responses with some statuses ({@code count=statuses:404,5xx}): a call needs
 * a token to go ahead and gets it back when its status is not one of them. On the local store and on a real Redis.
 */
class CountStatusesTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();

    @AfterEach
    void close() {
        limiters.forEach(RateLimiter::close);
    }

    private RateLimiter limiter(String store) {
        RateLimiter.Builder b = RateLimiter.builder().timeMeter(clock).waiter(clock);
        b.store(
                "redis".equals(store)
                        ? JedisBucketStore.builder()
                                .url(redis.uri())
                                .keyPrefix("test-" + UUID.randomUUID())
                                .commandTimeout(Duration.ofSeconds(5))
                                .timeMeter(clock)
                                .build()
                        : LocalBucketStore.builder().timeMeter(clock).build());
        RateLimiter limiter = b.build();
        limiters.add(limiter);
        return limiter;
    }

    private static final RequestContext SCANNER =
            RequestContext.builder().remoteAddress("203.0.113.9").build();

    /** The Boot sample's not-found rule: 20 404s a minute, then 429; 200s cost nothing. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void onlyTheCountedStatusesKeepTheirTokens(String store) {
        Guard notFound = limiter(store)
                .guard(Rule.builder("not-found")
                        .key("ip")
                        .limits("20/1m")
                        .count(HttpStatuses.parse("404"))
                        .build());
        assertThat(notFound.settlesOnCompletion()).isTrue();
        for (int i = 0; i < 100; i++) {
            Decision d = notFound.acquire(SCANNER);
            assertThat(d.permitted()).as("200 number %d", i).isTrue();
            assertThat(d.verdicts().get(0).windows())
                    .as("a permitted call claims no window")
                    .isEmpty();
            notFound.completed(d, false, i % 2 == 0 ? 200 : 403);
        }
        for (int i = 0; i < 20; i++) {
            Decision d = notFound.acquire(SCANNER);
            assertThat(d.permitted()).as("404 number %d", i).isTrue();
            notFound.completed(d, false, 404);
        }
        Decision over = notFound.acquire(SCANNER);
        assertThat(over.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(over.retryAfterNanos())
                .as("one token of 20/1m")
                .isEqualTo(Duration.ofSeconds(3).toNanos());
        assertThat(over.verdicts().get(0).windows())
                .as("a rejection shows the window")
                .hasSize(1);
        clock.advance(Duration.ofSeconds(3));
        assertThat(notFound.acquire(SCANNER).permitted())
                .as("one token is back")
                .isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void classesCountEveryStatusOfTheClass(String store) {
        Guard errors = limiter(store)
                .guard(Rule.builder("errors")
                        .key("ip")
                        .limits("3/1h")
                        .count(HttpStatuses.parse("404, 5XX"))
                        .build());
        for (int status : new int[] {500, 503, 599}) {
            errors.completed(errors.acquire(SCANNER), false, status);
        }
        assertThat(errors.acquire(SCANNER).outcome()).isEqualTo(Outcome.REJECTED);
    }

    /** A status nobody reports (a method call, the two-argument form) keeps the tokens: the strict side. */
    @Test
    void aCallWithNoStatusKeepsItsTokens() {
        Guard g = limiter("local")
                .guard(Rule.builder("g")
                        .key("ip")
                        .limits("2/1h")
                        .count(HttpStatuses.parse("404"))
                        .build());
        g.completed(g.acquire(SCANNER), false);
        g.completed(g.acquire(SCANNER), true, 0);
        assertThat(g.acquire(SCANNER).outcome()).isEqualTo(Outcome.REJECTED);
    }

    /** A guard with a rule that counts failures and one that counts statuses settles each by its own measure. */
    @Test
    void failuresAndStatusesAreSettledEachByItsRule() {
        RateLimiter limiter = limiter("local");
        Rule logins = Rule.builder("logins")
                .key("ip")
                .limits("5/1h")
                .count(Rule.Counted.FAILURES)
                .build();
        Rule notFound = Rule.builder("nf")
                .key("ip")
                .limits("5/1h")
                .count(HttpStatuses.parse("404"))
                .build();
        Guard both = limiter.guard(logins, notFound);
        both.completed(both.acquire(SCANNER), true, 200);
        both.completed(both.acquire(SCANNER), false, 404);
        assertThat(admitted(limiter.guard(logins))).as("one failure kept of 5").isEqualTo(4);
        assertThat(admitted(limiter.guard(notFound))).as("one 404 kept of 5").isEqualTo(4);
    }

    /** @return how many calls the guard admits, never completed, before it rejects one */
    private static int admitted(Guard guard) {
        int n = 0;
        while (guard.acquire(SCANNER).permitted()) {
            n++;
        }
        return n;
    }

    @Test
    void statusSetsAreParsedStrictly() {
        HttpStatuses set = HttpStatuses.parse(" 404 ,5xx,429");
        assertThat(set.toString()).isEqualTo("404,5xx,429");
        assertThat(set.contains(404)).isTrue();
        assertThat(set.contains(500)).isTrue();
        assertThat(set.contains(599)).isTrue();
        assertThat(set.contains(403)).isFalse();
        assertThat(set.contains(0)).isFalse();
        assertThat(set.contains(-404)).isFalse();
        assertThat(set.contains(1404)).isFalse();
        assertThat(set).isEqualTo(HttpStatuses.parse("5xx,429,404"));
        for (String bad :
                new String[] {"", " ", "404,", "4x4", "6xx", "0xx", "99", "600", "4040", "abc", "40 4", "+404", "٤٠٤"
                }) {
            assertThatThrownBy(() -> HttpStatuses.parse(bad))
                    .as("'%s'", bad)
                    .isInstanceOf(InvalidRateLimitConfigurationException.class);
        }
        assertThat(Rule.builder("r").limits("1/1s").count(set).build().toString())
                .contains("count=STATUSES")
                .contains("statuses=404,5xx,429");
    }
}
