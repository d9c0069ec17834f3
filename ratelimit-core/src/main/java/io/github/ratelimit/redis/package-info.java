/**
 * Everything Jedis: buckets in Redis (standalone, Sentinel, Cluster) through
 * {@link io.github.ratelimit.redis.JedisBucketStore}, with its Lua scripts, auto-pipeline, circuit breaker and server
 * clock; per-key limits and plans changed at run time ({@link io.github.ratelimit.redis.RedisLimitProvider}) and the
 * operations operators run on live keys ({@link io.github.ratelimit.redis.LimitAdmin}).
 *
 * <p>Uses the API, the store SPI, {@code support}, Bucket4j, Caffeine, Jedis, and from {@code internal} the Bucket4j
 * glue, key expressions and plan names; never the engine or the entry points' plumbing (checked by
 * {@code ArchitectureTest}).
 * Every script's work is bounded by the rule, never by what Redis holds (docs/RELIABILITY.md).
 */
@NullMarked
package io.github.ratelimit.redis;

import org.jspecify.annotations.NullMarked;
