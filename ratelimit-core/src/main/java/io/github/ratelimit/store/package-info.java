/**
 * Where buckets live: the store SPI ({@link io.github.ratelimit.store.BucketStore} and its nested types) and the
 * local store ({@link io.github.ratelimit.store.LocalBucketStore}) with its sliding-window states. The Redis stores
 * are in {@link io.github.ratelimit.redis}.
 *
 * <p>Uses the API, Bucket4j, Caffeine and the Bucket4j glue both stores share ({@code internal.bucket}); never Redis,
 * the engine or the entry points' plumbing (checked by {@code ArchitectureTest}).
 */
@NullMarked
package io.github.ratelimit.store;

import org.jspecify.annotations.NullMarked;
