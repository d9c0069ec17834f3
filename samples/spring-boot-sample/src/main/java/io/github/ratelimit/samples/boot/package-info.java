/** The Spring Boot sample: URL rules, {@code @RateLimit} on controllers, logins limited on every path, Actuator. See the README for how to run it. */
package io.github.ratelimit.samples.boot;
