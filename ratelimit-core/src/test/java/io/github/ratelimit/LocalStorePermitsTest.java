package io.github.ratelimit;

import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;

class LocalStorePermitsTest extends PermitsContract {

    @Override
    protected BucketStore newStore(ManualClock clock) {
        return LocalBucketStore.builder().timeMeter(clock).build();
    }
}
