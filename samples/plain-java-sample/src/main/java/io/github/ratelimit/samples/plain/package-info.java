/** The plain Java sample: a RateLimiter and a Guard, decision by decision. See the README for how to run it. */
package io.github.ratelimit.samples.plain;
