/**
 * What a plain-Java application hands the limiter to be observed with Micrometer: {@link
 * io.github.ratelimit.micrometer.MicrometerObservations}. The only public package whose signatures name Micrometer's
 * types, which the core's dependency on Micrometer leaves optional: use it only with Micrometer (1.10 or newer) on
 * the class path. The Spring Boot starter and the {@code web.xml} filter wire it themselves.
 *
 * <p>May use the API, Micrometer and the engine's {@code internal.metrics}; nothing of the API uses it.
 */
@NullMarked
package io.github.ratelimit.micrometer;

import org.jspecify.annotations.NullMarked;
