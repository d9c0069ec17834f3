/**
 * Small helpers the API, the stores and the entry points share: durations in the limits text ({@code 1s},
 * {@code 100ms}), log text that cannot forge a line, and logs rate-limited so a flood of failures does not flood the
 * log.
 *
 * <p>A leaf: it uses nothing of the project, so no arrow points from the API into {@code internal} for them. Public
 * because several packages use them; applications need not.
 */
@NullMarked
package io.github.ratelimit.support;

import org.jspecify.annotations.NullMarked;
