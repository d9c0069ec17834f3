/**
 * Where buckets live: the store SPI ({@link io.github.ratelimit.store.BucketStore} and its nested types), the local
 * store ({@link io.github.ratelimit.store.LocalBucketStore}), and Redis through Jedis (standalone, Sentinel,
 * Cluster): {@link io.github.ratelimit.store.JedisBucketStore} with its Lua scripts, auto-pipeline, circuit breaker
 * and server clock; per-key limits changed at run time ({@link io.github.ratelimit.store.RedisLimitStore}) and the
 * operations on live keys ({@link io.github.ratelimit.store.LimitAdmin}).
 *
 * <p>Uses the API, small {@code internal} helpers, Bucket4j, Caffeine and Jedis; never the engine or the entry
 * points' plumbing. Every script's work is bounded by the rule, never by what Redis holds (docs/RELIABILITY.md).
 */
package io.github.ratelimit.store;
