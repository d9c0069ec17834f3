/**
 * The Redis store benchmark: throughput, accuracy and round trips against hand-written Jedis calls and other
 * libraries, and each script's work with hostile state (docs/BENCHMARKS.md, docs/RELIABILITY.md).
 */
package io.github.ratelimit.benchmarks.redis;
