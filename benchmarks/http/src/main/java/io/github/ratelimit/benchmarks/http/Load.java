package io.github.ratelimit.benchmarks.http;

/**
 * One measured phase of closed-loop load: {@code connections} keep-alive connections, each sending its next request
 * as soon as the previous answer arrived.
 *
 * @param requestsPerSecond completed requests per second
 * @param p50Micros median latency
 * @param p99Micros 99th percentile latency
 * @param maxMicros the slowest request
 * @param failed responses other than 2xx, and socket errors
 */
record Load(double requestsPerSecond, double p50Micros, double p99Micros, double maxMicros, long failed) {

    /** Runs load against a URL. */
    interface Generator {

        /**
         * @param host the host
         * @param port the port
         * @param path the path
         * @param connections concurrent keep-alive connections
         * @param seconds how long
         * @return what was measured
         * @throws Exception when the load cannot run
         */
        Load run(String host, int port, String path, int connections, int seconds) throws Exception;

        /** @return a name for the report */
        String name();
    }
}
