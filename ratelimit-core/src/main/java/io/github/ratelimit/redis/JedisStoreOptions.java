package io.github.ratelimit.redis;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.UnifiedJedis;

/**
 * The options a {@link JedisBucketStore.Builder} collects, with their defaults, and the checks each one passes as it
 * is set, so a bad value fails where it is given with a message that names it. Not thread-safe.
 */
final class JedisStoreOptions {

    @Nullable
    String url;

    @Nullable
    String sentinelMaster;

    @Nullable
    Set<HostAndPort> sentinels;

    @Nullable
    Set<HostAndPort> clusterNodes;

    @Nullable
    UnifiedJedis client;

    @Nullable
    String user;

    @Nullable
    String password;

    boolean ssl;

    @Nullable
    SSLSocketFactory sslSocketFactory;

    @Nullable
    SSLParameters sslParameters;

    String keyPrefix = "ratelimit";
    Duration commandTimeout = Duration.ofMillis(50);
    Duration connectTimeout = Duration.ofMillis(200);
    Duration backgroundTimeout = Duration.ofSeconds(2);
    int poolSize = 16;
    int maxAttempts = 32;
    Duration retryBudget = Duration.ofMillis(100);

    @Nullable
    TimeMeter timeMeter;

    int breakerFailureThreshold = 5;
    Duration breakerOpenDuration = Duration.ofSeconds(1);
    Duration breakerMinFailureStreak = Duration.ofMillis(250);
    boolean batching = true;
    boolean autoPipelining = true;
    boolean migrateKeys = true;
    Duration keyMigrationAgain = KeyMigration.AGAIN;
    long maximumCachedBuckets = 100_000;
    Duration clockCalibrationInterval = Duration.ofSeconds(10);
    LongSupplier localWallClock = () -> System.currentTimeMillis() * 1_000_000L;

    /** @return the client given to the builder, or {@code null} to connect; checks that exactly one target is given */
    @Nullable
    UnifiedJedis client() {
        int targets = (url != null ? 1 : 0)
                + (sentinelMaster != null ? 1 : 0)
                + (clusterNodes != null ? 1 : 0)
                + (client != null ? 1 : 0);
        if (targets != 1) {
            throw new InvalidRateLimitConfigurationException("redis store: " + (targets == 0 ? "no" : targets)
                    + " connection targets given. Give exactly one: a url (redis://host:6379), sentinel master "
                    + "and nodes, cluster nodes, or an existing Jedis client.");
        }
        return client;
    }

    static String keyPrefix(String keyPrefix) {
        if (keyPrefix == null || keyPrefix.isBlank() || keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
            throw new InvalidRateLimitConfigurationException("redis key prefix '" + keyPrefix + "' is invalid. "
                    + "Use non-empty text without braces, e.g. 'ratelimit'.");
        }
        return keyPrefix;
    }

    static TimeMeter wallClock(TimeMeter timeMeter) {
        if (!Objects.requireNonNull(timeMeter, "timeMeter").isWallClockBased()) {
            throw new InvalidRateLimitConfigurationException("redis store: the time meter must be wall-clock "
                    + "based (epoch time), since instances share buckets. Use TimeMeter.SYSTEM_MILLISECONDS.");
        }
        return timeMeter;
    }

    static Duration positive(String name, Duration value) {
        if (value == null || value.isZero() || value.isNegative()) {
            throw new InvalidRateLimitConfigurationException(
                    "redis store: " + name + " must be positive, but was " + value + ". Use e.g. 50ms.");
        }
        return value;
    }

    static int atLeast(String name, int value, int min) {
        if (value < min) {
            throw new InvalidRateLimitConfigurationException(
                    "redis store: " + name + " must be at least " + min + ", but was " + value + ".");
        }
        return value;
    }
}
