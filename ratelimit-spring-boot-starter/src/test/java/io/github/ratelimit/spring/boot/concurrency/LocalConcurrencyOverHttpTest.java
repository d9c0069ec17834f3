package io.github.ratelimit.spring.boot.concurrency;

/** {@link ConcurrencyOverHttpContract} on the local store. */
class LocalConcurrencyOverHttpTest extends ConcurrencyOverHttpContract {}
