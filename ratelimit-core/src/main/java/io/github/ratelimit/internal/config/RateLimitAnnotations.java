package io.github.ratelimit.internal.config;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.RateLimit;
import io.github.ratelimit.Rule;
import io.github.ratelimit.support.Durations;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Turns {@link RateLimit} annotations into {@link Rule}s. The servlet filter and the Spring aspect both use
 * it, once per method at start-up, so an annotation means the same in both.
 *
 * <h2>Names of unnamed rules</h2>
 * An annotation without {@link RateLimit#name()} names its rule after where it is declared: {@code
 * OrderController#list} on a method ({@code OrderController#list(String,int)} when the method is overloaded,
 * {@code OrderController#export[0]} for the first of repeated annotations), {@code OrderController} on a type.
 * That name is for operators: it names the rule's buckets (so it stays the same from one release to the next),
 * its metrics, its entry in the Actuator endpoint and its log lines. Clients never see it, since it names a class
 * and a method: the rate-limit headers and the response body show the rule's {@link Rule#publicName()}, here
 * {@code rule-} and the first 12 hexadecimal digits of the SHA-256 of the name ({@code rule-063364d4fab4} for
 * {@code OrderController#list}). A digest is the same on every instance and after every restart, so a client can
 * tell one rule's items from another's, and two names give two digests (a limiter refuses two rules that would
 * show one). It hides the name, but someone who guesses a class and method name can check the guess against it:
 * to show clients a name of your choice, give the annotation a {@code name}, which is then both the rule's name
 * and what clients see.
 */
public final class RateLimitAnnotations {

    private RateLimitAnnotations() {}

    /**
     * The rules that apply to calls of a method: its type's annotations (shared by all methods of the type)
     * followed by its own.
     *
     * @param method the method, whose declaring class carries the type-level annotations
     * @return the rules, empty when neither is annotated
     * @throws InvalidRateLimitConfigurationException naming the method and the bad attribute
     */
    public static List<Rule> rulesFor(Method method) {
        return rulesFor(method.getDeclaringClass(), method);
    }

    /**
     * The rules that apply to calls of a method of a type, for when the type is a subclass of the method's
     * declaring class (a proxy target, a servlet subclass).
     *
     * @param type the type whose annotations apply to all its methods
     * @param method the method
     * @return the type's rules followed by the method's
     * @throws InvalidRateLimitConfigurationException naming the element and the bad attribute
     */
    public static List<Rule> rulesFor(Class<?> type, Method method) {
        List<Rule> rules = new ArrayList<>(rulesOfType(type));
        RateLimit[] own = method.getAnnotationsByType(RateLimit.class);
        String base = type.getSimpleName() + "#" + method.getName();
        if (isOverloaded(method)) {
            base += Arrays.stream(method.getParameterTypes())
                    .map(Class::getSimpleName)
                    .collect(Collectors.joining(",", "(", ")"));
        }
        String where = "@RateLimit on " + type.getSimpleName() + "#" + method.getName()
                + Arrays.stream(method.getParameterTypes())
                        .map(Class::getSimpleName)
                        .collect(Collectors.joining(", ", "(", ")"));
        rules.addAll(toRules(own, base, where));
        return rules;
    }

    /**
     * The rules declared on a type, shared by all its methods.
     *
     * @param type the type
     * @return its rules, empty when it is not annotated
     * @throws InvalidRateLimitConfigurationException naming the type and the bad attribute
     */
    public static List<Rule> rulesOfType(Class<?> type) {
        return toRules(
                type.getAnnotationsByType(RateLimit.class), type.getSimpleName(), "@RateLimit on " + type.getName());
    }

    /**
     * @param element a method or type
     * @return whether it carries {@link RateLimit} directly
     */
    public static boolean isAnnotated(AnnotatedElement element) {
        return element.getAnnotationsByType(RateLimit.class).length > 0;
    }

    /**
     * Converts one annotation.
     *
     * @param annotation the annotation
     * @param defaultName the name when the annotation gives none; the rule then shows clients a digest of it
     * @param where the source for messages, e.g. {@code @RateLimit on OrderController#list()}
     * @return the rule
     * @throws InvalidRateLimitConfigurationException naming {@code where} and the bad attribute
     */
    public static Rule toRule(RateLimit annotation, String defaultName, String where) {
        boolean unnamed = annotation.name().isBlank();
        String name = unnamed ? defaultName : annotation.name().trim();
        Rule.Builder builder = Rule.builder(name)
                .publicName(unnamed && name != null ? publicNameOf(name) : null)
                .source(where)
                .key(annotation.key())
                .mode(annotation.mode())
                .cost(annotation.cost())
                .onStoreFailure(annotation.onStoreFailure())
                .onMissingKey(annotation.onMissingKey())
                .count(annotation.count())
                .permits(annotation.permits())
                .charge(annotation.charge())
                .concurrency(annotation.concurrency());
        boolean first = true;
        long[] permits = {annotation.perSecond(), annotation.perMinute(), annotation.perHour(), annotation.perDay()};
        String[] attributes = {"perSecond", "perMinute", "perHour", "perDay"};
        Duration[] periods = {Duration.ofSeconds(1), Duration.ofMinutes(1), Duration.ofHours(1), Duration.ofDays(1)};
        for (int i = 0; i < permits.length; i++) {
            if (permits[i] == 0) {
                continue;
            }
            try {
                Limit limit = Limit.of(permits[i], periods[i]);
                if (first && annotation.burst() != 0) {
                    limit = limit.withBurst(annotation.burst());
                }
                builder.limit(limit);
            } catch (InvalidRateLimitConfigurationException e) {
                throw new InvalidRateLimitConfigurationException(
                        where,
                        String.valueOf(permits[i]),
                        attributes[i]
                                + " = " + permits[i]
                                + (first && annotation.burst() != 0 ? " with burst = " + annotation.burst() : "")
                                + " is invalid: " + e.getMessage(),
                        "Use a value from 1 to " + Limit.MAX_PERMITS + " (0 leaves the window unset).");
            }
            first = false;
        }
        if (annotation.burst() != 0 && first) {
            throw new InvalidRateLimitConfigurationException(
                    where,
                    String.valueOf(annotation.burst()),
                    "burst = " + annotation.burst()
                            + " needs a perSecond, perMinute, perHour or perDay window to apply to",
                    "Set one, or write the burst into limits, e.g. '5/1s burst=20'.");
        }
        builder.limits(annotation.limits());
        // TOKEN_BUCKET is the attribute's default, which Java cannot tell from TOKEN_BUCKET written out: it means no
        // algorithm given, so a rule with a calendar quota is the fixed window it must be (Rule.Builder#algorithm).
        if (annotation.algorithm() != Algorithm.TOKEN_BUCKET) {
            builder.algorithm(annotation.algorithm());
        }
        if (annotation.maxWaiting() != -1) {
            builder.maxWaiting(annotation.maxWaiting());
        }
        if (!annotation.maxDelay().isBlank()) {
            builder.maxDelay(duration(where, "maxDelay", annotation.maxDelay()));
        }
        if (!annotation.blockFor().isBlank()) {
            builder.blockFor(duration(where, "blockFor", annotation.blockFor()));
        }
        return builder.build();
    }

    /** @return the duration an attribute's text gives, refused with where it is when it is none */
    private static Duration duration(String where, String attribute, String text) {
        Duration d = Durations.parseOrNull(text);
        if (d == null) {
            throw new InvalidRateLimitConfigurationException(
                    where, text, attribute + " '" + text + "' is not a duration", "Use " + Durations.SYNTAX + ".");
        }
        return d;
    }

    private static List<Rule> toRules(RateLimit[] annotations, String baseName, String where) {
        List<Rule> rules = new ArrayList<>(annotations.length);
        for (int i = 0; i < annotations.length; i++) {
            String name = annotations.length == 1 ? baseName : baseName + "[" + i + "]";
            String source = annotations.length == 1
                    ? where
                    : where + " (annotation " + (i + 1) + " of " + annotations.length + ")";
            rules.add(toRule(annotations[i], name, source));
        }
        return rules;
    }

    /**
     * @param name the name of an unnamed annotation's rule
     * @return what clients see in its place: {@code rule-} and the first 12 hexadecimal digits of its SHA-256
     */
    static String publicNameOf(String name) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            return "rule-" + HexFormat.of().formatHex(digest, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private static boolean isOverloaded(Method method) {
        int count = 0;
        for (Method m : method.getDeclaringClass().getDeclaredMethods()) {
            if (m.getName().equals(method.getName()) && !m.isBridge() && !m.isSynthetic()) {
                count++;
            }
        }
        return count > 1;
    }
}
