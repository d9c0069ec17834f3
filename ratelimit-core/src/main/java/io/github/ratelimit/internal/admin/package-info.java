/**
 * Operations on a live system, the same whichever way an operator comes: the Spring Boot starter's Actuator
 * endpoints ({@code ratelimits}, {@code ratelimitkeys}, the store's health) and the servlet module's admin servlet
 * both call this package, so they check input with the same messages and limits and show the same summaries. It
 * holds the most-rejected keys ({@code RejectedKeySummary}), the checks of an operator's input ({@code AdminInput}), the
 * per-key operations with their answers ({@code KeyOperations}) and the summaries of rules, stores and entries as
 * plain maps and lists ({@code AdminViews}), which each face writes as JSON its own way. No JSON, servlet or Spring
 * here. Uses the API and the Redis package's {@code LimitAdmin}. Not part of the API.
 */
package io.github.ratelimit.internal.admin;
