package io.github.ratelimit.internal.web;

import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The guards a web entry point decides requests with: for each request, the URL rules whose path pattern and method
 * match it together with the rules of the handler that will serve it, as one guard (one decision per request, and a
 * rule that rejects costs the others nothing). Each combination of rules is compiled once and cached, up to
 * {@value #MAX_CACHED} combinations (beyond, a combination is compiled per request, which the limiter makes cheap);
 * the servlet filter and the Spring WebFlux filter both decide through it. Thread-safe.
 *
 * @param <T> what the entry point keeps per combination: the guard, or the guard with facts of its own about the rules
 */
public final class UrlGuards<T> {

    /** The most rule combinations kept compiled. */
    public static final int MAX_CACHED = 4096;

    private final RateLimiter limiter;
    private final List<UrlRule> urlRules;
    private final Function<Guard, T> wrap;
    /** A bit per distinct handler rule (by name, unique in a limiter), after the URL rules' bits. */
    private final Map<String, Integer> handlerRuleBits = new ConcurrentHashMap<>();

    private final AtomicInteger nextHandlerRuleBit = new AtomicInteger();
    private final Map<BitSet, T> cache = new ConcurrentHashMap<>();

    /**
     * @param limiter compiles the guards; every URL rule is compiled now, so a bad one fails here
     * @param urlRules the URL rules, in evaluation order
     * @param wrap what to keep per combination, given its guard
     * @throws io.github.ratelimit.InvalidRateLimitConfigurationException when a rule is invalid for the limiter
     */
    public UrlGuards(RateLimiter limiter, List<UrlRule> urlRules, Function<Guard, T> wrap) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.urlRules = List.copyOf(urlRules);
        this.wrap = Objects.requireNonNull(wrap, "wrap");
        this.urlRules.forEach(u -> limiter.guard(u.rule()));
    }

    /**
     * @return the URL rules
     */
    public List<UrlRule> urlRules() {
        return urlRules;
    }

    /**
     * @param method the request's HTTP method
     * @param path the request's path within the application, as the framework matches handlers to it
     * @param handlerRules the rules of the handler that will serve the request (empty when none)
     * @return what is kept for the combination of the URL rules that match and the handler's rules, or {@code null}
     *         when no rule applies
     */
    public T forRequest(String method, String path, List<Rule> handlerRules) {
        BitSet matched = null;
        for (int i = 0; i < urlRules.size(); i++) {
            if (urlRules.get(i).matches(method, path)) {
                matched = matched == null ? new BitSet() : matched;
                matched.set(i);
            }
        }
        if (!handlerRules.isEmpty()) {
            matched = matched == null ? new BitSet() : matched;
            for (Rule r : handlerRules) {
                matched.set(handlerRuleBits.computeIfAbsent(
                        r.name(), n -> urlRules.size() + nextHandlerRuleBit.getAndIncrement()));
            }
        }
        if (matched == null) {
            return null;
        }
        T kept = cache.get(matched);
        if (kept == null) {
            List<Rule> rules = new ArrayList<>();
            for (int i = matched.nextSetBit(0); i >= 0 && i < urlRules.size(); i = matched.nextSetBit(i + 1)) {
                rules.add(urlRules.get(i).rule());
            }
            rules.addAll(handlerRules);
            kept = wrap.apply(limiter.guard(rules));
            if (cache.size() < MAX_CACHED) {
                cache.put(matched, kept);
            }
        }
        return kept;
    }
}
