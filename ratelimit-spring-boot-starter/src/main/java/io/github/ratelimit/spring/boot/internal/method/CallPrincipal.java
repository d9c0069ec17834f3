package io.github.ratelimit.spring.boot.internal.method;

import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Names who makes the current call, for keys by principal of {@code @RateLimit} methods: Spring Security's
 * authentication where it is present, the servlet request's user where a request is served. Beans of this type,
 * ordered, are asked in turn; the first name wins.
 */
@FunctionalInterface
public interface CallPrincipal {

    /**
     * @return the name of who makes the call on this thread, or {@code null} when this source does not know
     */
    @Nullable
    String name();

    /**
     * @param sources the sources, in order
     * @return the first name any of them gives, or {@code null}
     */
    static Supplier<String> firstOf(List<CallPrincipal> sources) {
        List<CallPrincipal> all = List.copyOf(sources);
        return () -> {
            for (CallPrincipal source : all) {
                String name = source.name();
                if (name != null) {
                    return name;
                }
            }
            return null;
        };
    }
}
