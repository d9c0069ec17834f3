package io.github.ratelimit.store;

import io.github.ratelimit.testing.ManualClock;

class LocalBucketStoreContractTest extends BucketStoreContract {

    @Override
    protected BucketStore newStore(ManualClock clock) {
        return LocalBucketStore.builder().timeMeter(clock).build();
    }
}
