package io.github.ratelimit.key;

/**
 * A {@link KeyResolver} that names itself, so it can be found with {@link java.util.ServiceLoader}: list the
 * implementation in {@code META-INF/services/io.github.ratelimit.key.NamedKeyResolver}, and rules can use its
 * name as a key (the servlet filter loads them at start-up). Implementations need a public no-argument
 * constructor and must be thread-safe.
 */
public interface NamedKeyResolver extends KeyResolver {

    /**
     * @return the name rules use, e.g. {@code tenant}; letters, digits, {@code _ . -}, not a built-in name
     */
    String name();
}
