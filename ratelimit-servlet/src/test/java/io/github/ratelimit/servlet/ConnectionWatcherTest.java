package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The watcher of waiting requests' connections, with probes the test controls. */
class ConnectionWatcherTest {

    private final ConnectionWatcher watcher = new ConnectionWatcher(Duration.ofMillis(20));

    @AfterEach
    void close() {
        watcher.close();
    }

    @Test
    void cancelsTheWaitOfARequestWhoseClientHasGoneAndStopsWatchingIt() {
        AtomicBoolean gone = new AtomicBoolean();
        AtomicInteger asked = new AtomicInteger();
        CompletableFuture<Void> wait = new CompletableFuture<>();
        watcher.watch(
                () -> {
                    asked.incrementAndGet();
                    return gone.get();
                },
                wait);
        await().atMost(Duration.ofSeconds(10)).until(() -> asked.get() >= 2);
        assertThat(wait).isNotDone();
        gone.set(true);
        await().atMost(Duration.ofSeconds(10)).until(wait::isCancelled);
        assertThat(watcher.watched()).isZero();
    }

    @Test
    void anEndedWaitIsNoLongerWatched() {
        CompletableFuture<Void> wait = new CompletableFuture<>();
        ConnectionWatcher.Watch watch = watcher.watch(() -> true, wait);
        assertThat(watcher.watched()).isEqualTo(1);
        watch.end();
        assertThat(watcher.watched()).isZero();
    }

    @Test
    void aProbeThatFailsStopsBeingAskedAndLeavesTheWaitAlone() {
        AtomicInteger asked = new AtomicInteger();
        CompletableFuture<Void> wait = new CompletableFuture<>();
        watcher.watch(
                () -> {
                    asked.incrementAndGet();
                    throw new IllegalStateException("cannot tell");
                },
                wait);
        await().atMost(Duration.ofSeconds(10)).until(() -> watcher.watched() == 0);
        assertThat(asked.get()).isEqualTo(1);
        assertThat(wait).isNotDone();
    }

    @Test
    void aRequestThatCannotBeCheckedIsNotWatched() {
        ConnectionWatcher.Watch watch = watcher.watch(null, new CompletableFuture<>());
        assertThat(watcher.watched()).isZero();
        watch.end();
    }
}
