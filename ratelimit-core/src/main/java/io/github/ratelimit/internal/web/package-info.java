/**
 * Plumbing the entry points share (the servlet filter, the Spring advisor, the WebFlux filter): URL rules and their
 * path patterns, the guards that match them, the phase a rule decides in, and the {@code problem+json} body of a
 * rejection. Uses no servlet API: each entry point adapts its own request. Not part of the API.
 */
package io.github.ratelimit.internal.web;
