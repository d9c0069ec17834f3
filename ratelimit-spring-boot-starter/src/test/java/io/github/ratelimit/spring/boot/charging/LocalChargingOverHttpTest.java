package io.github.ratelimit.spring.boot.charging;

/** {@link ChargingOverHttpContract} on the local store. */
class LocalChargingOverHttpTest extends ChargingOverHttpContract {}
