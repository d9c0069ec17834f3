/** JMH benchmarks of local decisions against bare Bucket4j (docs/BENCHMARKS-local.md). */
package io.github.ratelimit.benchmarks;
