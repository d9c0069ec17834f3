/**
 * What a failed start-up tells the user: the {@code FailureAnalyzer} that turns an invalid rate-limit configuration
 * into Spring Boot's "APPLICATION FAILED TO START" report, naming the property and how to fix it. Registered in
 * {@code META-INF/spring.factories}; may use the core's exceptions and Spring Boot only.
 */
@NullMarked
package io.github.ratelimit.spring.boot.autoconfigure.diagnostics;

import org.jspecify.annotations.NullMarked;
