/**
 * What a rule counts by: {@link io.github.ratelimit.key.KeyResolver}s (built in: {@code global}, {@code ip},
 * {@code user}, headers, parameters; custom ones by name or through {@link java.util.ServiceLoader} as
 * {@link io.github.ratelimit.key.NamedKeyResolver}), and the client address behind trusted proxies
 * ({@link io.github.ratelimit.key.ClientIpResolver}).
 *
 * <p>Uses the API's types only: never a store or the engine.
 */
@NullMarked
package io.github.ratelimit.key;

import org.jspecify.annotations.NullMarked;
