/** The Spring Cloud Gateway sample: the gateway's RequestRateLimiter filter backed by ratelimit. See the README for how to run it. */
package io.github.ratelimit.samples.gateway;
