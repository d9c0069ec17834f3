/**
 * The test harness: real {@code redis-server} processes (standalone, Sentinel, Cluster) started on free ports for a
 * test and stopped after it, with the faults the tests need (kill, freeze, fail over). Never a mock of Redis.
 */
package io.github.ratelimit.testing.redis;
