package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.RateLimiter.Waiter;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Real time: asynchronous SOFT delays complete on a thread the limiter owns, which ends when the limiter closes,
 * never on the JDK's shared delay thread (which lives as long as the JVM and pins the class loader of a web
 * application that first used it).
 */
class DelayThreadTest {

    private static Thread thread(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(prefix))
                .filter(Thread::isAlive)
                .findFirst()
                .orElse(null);
    }

    @Test
    void delaysCompleteOnTheLimitersOwnThreadWhichEndsWhenItCloses() throws Exception {
        RateLimiter limiter = RateLimiter.builder().build();
        Guard guard = limiter.guard(Rule.builder("soft")
                .limits("1/50ms")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(1))
                .build());
        guard.acquire(RequestContext.empty());
        CompletableFuture<String> completedOn = guard.acquireAsync(RequestContext.empty())
                .thenApply(d -> d.outcome() + " on " + Thread.currentThread().getName());
        assertThat(completedOn.get(5, TimeUnit.SECONDS)).startsWith("DELAYED on ratelimit-delays-");
        String name = completedOn.join().substring("DELAYED on ".length());
        Thread delays = thread(name);
        assertThat(delays).isNotNull();
        assertThat(delays.getContextClassLoader()).isSameAs(RateLimiter.class.getClassLoader());
        limiter.close();
        delays.join(5_000);
        assertThat(delays.isAlive()).isFalse();
    }

    @Test
    void closingCompletesDelaysStillPendingSoNothingWaitsForever() throws Exception {
        RateLimiter limiter = RateLimiter.builder().build();
        Guard guard = limiter.guard(Rule.builder("soft")
                .limits("1/1m")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofMinutes(5))
                .build());
        guard.acquire(RequestContext.empty());
        CompletableFuture<Decision> pending = guard.acquireAsync(RequestContext.empty());
        assertThat(pending).isNotDone();
        limiter.close();
        assertThatThrownBy(() -> pending.get(5, TimeUnit.SECONDS))
                .isInstanceOf(CancellationException.class)
                .hasMessage("the rate limiter was closed");
    }

    @Test
    void aWaiterHandedToTheBuilderIsNotClosedByTheLimiter() throws Exception {
        Waiter waiter = Waiter.system();
        try (RateLimiter limiter = RateLimiter.builder().waiter(waiter).build()) {
            limiter.guard(Rule.builder("r").limits("1/1s").build());
        }
        CompletableFuture<Void> later = waiter.after(Duration.ofMillis(10).toNanos());
        assertThat(later.get(5, TimeUnit.SECONDS)).isNull();
        ((AutoCloseable) waiter).close();
        assertThatThrownBy(() -> waiter.after(1).join()).isInstanceOf(CancellationException.class);
    }
}
