package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketState;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.distributed.remote.RemoteBucketState;
import io.github.bucket4j.distributed.remote.RemoteStat;
import io.github.bucket4j.distributed.serialization.InternalSerializationHelper;
import io.github.bucket4j.distributed.versioning.Versions;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Limit;
import io.github.ratelimit.store.BucketStore;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CompactStateTest {

    private static final long NOW = 1_795_000_000_123_456_789L; // nanoseconds since the epoch, late 2026

    private static RemoteBucketState state(Algorithm algorithm, String... limits) {
        BucketConfiguration configuration = BucketStore.Limits.of(
                        Arrays.stream(limits).map(Limit::parse).toList(), algorithm)
                .bucketConfiguration();
        BucketState state =
                BucketState.createInitialState(configuration, io.github.bucket4j.MathType.INTEGER_64_BITS, NOW);
        return new RemoteBucketState(state, new RemoteStat(NOW), 1_795_000_000_123L);
    }

    private static byte[] bucket4j(RemoteBucketState state) {
        return InternalSerializationHelper.serializeState(state, Versions.getLatest());
    }

    private static byte[] compact(RemoteBucketState state) {
        return CompactState.encode(state, Versions.getLatest());
    }

    @Test
    void readsBackExactlyWhatItWrote() {
        Random random = new Random(7);
        for (Algorithm algorithm : List.of(Algorithm.TOKEN_BUCKET, Algorithm.FIXED_WINDOW)) {
            RemoteBucketState state = state(algorithm, "5/1s", "100/1m", "100000/1d");
            long now = NOW;
            for (int i = 0; i < 200; i++) {
                now += random.nextInt(300_000_000);
                state.refillAllBandwidth(now);
                if (random.nextBoolean() && state.getAvailableTokens() > 0) {
                    state.consume(1);
                } else if (random.nextInt(10) == 0) {
                    state.consume(7); // into debt, as a SOFT reservation goes
                }
                byte[] bytes = compact(state);
                RemoteBucketState read = CompactState.decode(bytes);
                assertThat(read.equalsByContent(state))
                        .as("%s after %d steps", algorithm, i)
                        .isTrue();
                assertThat(compact(read))
                        .as("the same state gives the same bytes")
                        .isEqualTo(bytes);
                assertThat(bytes[0]).isEqualTo(CompactState.FORMAT);
            }
        }
    }

    @Test
    void keepsTheConfigurationSoAReplacementCarriesSpentTokensOver() {
        RemoteBucketState state = state(Algorithm.TOKEN_BUCKET, "10/1m");
        state.consume(4);
        RemoteBucketState read = CompactState.decode(compact(state));
        BucketConfiguration raised = BucketStore.Limits.of(List.of(Limit.parse("20/1m")), Algorithm.TOKEN_BUCKET)
                .bucketConfiguration();
        read.replaceConfiguration(raised, TokensInheritanceStrategy.ADDITIVE, NOW);
        assertThat(read.getAvailableTokens()).isEqualTo(16);
    }

    @Test
    void takesAboutHalfOfBucket4jsFormatForATypicalTwoLimitBucket() {
        RemoteBucketState state = state(Algorithm.TOKEN_BUCKET, "5/1s", "100/1m");
        state.consume(1);
        int ours = compact(state).length;
        int theirs = bucket4j(state).length;
        // 101 B against 195 B with Bucket4j 8.19 (docs/redis.md); the times in nanoseconds take 9 B each.
        assertThat(ours).as("ours %d B, Bucket4j's %d B", ours, theirs).isLessThanOrEqualTo(theirs * 55 / 100);
    }

    @Test
    void readsStateWrittenInBucket4jsFormatBeforeIt() {
        RemoteBucketState state = state(Algorithm.FIXED_WINDOW, "5/1s", "100/1m");
        state.consume(3);
        RemoteBucketState read = CompactState.decode(bucket4j(state));
        assertThat(read.equalsByContent(state)).isTrue();
    }

    @Test
    void refusesBytesThatAreNeitherFormat() {
        byte[] bytes = compact(state(Algorithm.TOKEN_BUCKET, "5/1s", "100/1m"));
        for (int cut = 1; cut < bytes.length; cut++) {
            byte[] truncated = Arrays.copyOf(bytes, cut);
            assertThatThrownBy(() -> CompactState.decode(truncated))
                    .as("cut at %d", cut)
                    .isInstanceOf(RuntimeException.class);
        }
        byte[] longer = Arrays.copyOf(bytes, bytes.length + 1);
        assertThatThrownBy(() -> CompactState.decode(longer)).hasMessageContaining("left after the state");
        byte[] overlong = {
            CompactState.FORMAT,
            (byte) 0xFF,
            (byte) 0xFF,
            (byte) 0xFF,
            (byte) 0xFF,
            (byte) 0xFF,
            (byte) 0xFF,
            (byte) 0xFF,
            (byte) 0xFF,
            (byte) 0xFF,
            (byte) 0xFF,
            (byte) 0xFF
        };
        assertThatThrownBy(() -> CompactState.decode(overlong)).isInstanceOf(RuntimeException.class);
        assertThatThrownBy(() -> CompactState.decode("not a bucket".getBytes())).isInstanceOf(RuntimeException.class);
    }
}
