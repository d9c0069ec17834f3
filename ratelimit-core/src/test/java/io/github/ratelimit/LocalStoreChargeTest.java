package io.github.ratelimit;

import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;

class LocalStoreChargeTest extends ChargeContract {

    @Override
    protected BucketStore newStore(ManualClock clock) {
        return LocalBucketStore.builder().timeMeter(clock).build();
    }
}
