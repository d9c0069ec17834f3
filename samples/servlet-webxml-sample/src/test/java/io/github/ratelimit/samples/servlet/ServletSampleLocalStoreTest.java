package io.github.ratelimit.samples.servlet;

import java.util.Map;

class ServletSampleLocalStoreTest extends ServletSampleContract {

    @Override
    protected Map<String, String> storeParams() {
        return Map.of();
    }
}
