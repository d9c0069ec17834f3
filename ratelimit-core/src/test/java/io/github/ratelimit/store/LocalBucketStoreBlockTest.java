package io.github.ratelimit.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The local store's blocks: kept until they end, never made longer, bounded, lifted by a reset. */
class LocalBucketStoreBlockTest {

    private final ManualClock clock = new ManualClock();
    private final LocalBucketStore store =
            LocalBucketStore.builder().timeMeter(clock).maximumKeys(10).build();
    private final BucketStore.Key alice = new BucketStore.Key("api", "alice");

    @Test
    void keepsABlockUntilItEndsAndThenDropsIt() {
        assertThat(store.keepsBlocks()).isTrue();
        assertThat(store.blockedNanos(alice)).isZero();
        assertThat(store.block(alice, Duration.ofMinutes(10).toNanos()))
                .isEqualTo(Duration.ofMinutes(10).toNanos());
        clock.advance(Duration.ofMinutes(4));
        assertThat(store.blockedNanos(alice)).isEqualTo(Duration.ofMinutes(6).toNanos());
        assertThat(store.blockedNanos(new BucketStore.Key("other-rule", "alice")))
                .as("a block is one rule's")
                .isZero();
        clock.advance(Duration.ofMinutes(6));
        assertThat(store.blockedNanos(alice)).isZero();
        store.cleanUp();
        assertThat(store.block(alice, 5))
                .as("an ended block is replaced by a new one")
                .isEqualTo(5);
    }

    @Test
    void neverMakesARunningBlockLonger() {
        store.block(alice, Duration.ofMinutes(10).toNanos());
        clock.advance(Duration.ofMinutes(1));
        assertThat(store.block(alice, Duration.ofMinutes(10).toNanos()))
                .as("the running block's time left")
                .isEqualTo(Duration.ofMinutes(9).toNanos());
        assertThat(store.blockedNanos(alice)).isEqualTo(Duration.ofMinutes(9).toNanos());
    }

    @Test
    void resetLiftsTheBlock() {
        store.block(alice, Duration.ofHours(1).toNanos());
        store.reset(alice);
        assertThat(store.blockedNanos(alice)).isZero();
    }

    @Test
    void holdsAtMostTheMaximumNumberOfKeysOfBlocks() {
        for (int i = 0; i < 1000; i++) {
            store.block(
                    new BucketStore.Key("api", "key-" + i), Duration.ofHours(1).toNanos());
        }
        store.cleanUp();
        long held = 0;
        for (int i = 0; i < 1000; i++) {
            if (store.blockedNanos(new BucketStore.Key("api", "key-" + i)) > 0) {
                held++;
            }
        }
        assertThat(held).isBetween(1L, 10L);
    }

    @Test
    void refusesABlockOfNoTime() {
        assertThatThrownBy(() -> store.block(alice, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1 ns, not 0");
    }
}
