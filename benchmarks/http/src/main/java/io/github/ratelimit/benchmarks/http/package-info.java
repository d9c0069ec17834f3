/**
 * The HTTP benchmark: one application with bare, annotated, URL-rule and hand-written endpoints, load from wrk or a
 * Java generator, ratios within one run (docs/BENCHMARKS.md).
 */
package io.github.ratelimit.benchmarks.http;
