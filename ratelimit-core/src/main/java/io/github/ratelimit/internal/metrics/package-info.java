/**
 * The Micrometer binding: decisions counted and timed by rule and outcome, the store's breaker, round trips and
 * repairs. Used by the filter and the starter when Micrometer is present. Not part of the API.
 */
package io.github.ratelimit.internal.metrics;
