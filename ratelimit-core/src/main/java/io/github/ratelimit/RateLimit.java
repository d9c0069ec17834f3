package io.github.ratelimit;

import io.github.ratelimit.Rule.Counted;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits calls of a method, or of every method of a type, as one {@link Rule}.
 *
 * <pre>{@code
 * @RateLimit(key = "user", perSecond = 5, perMinute = 100)
 * public List<Order> list() { ... }
 * }</pre>
 *
 * <p>All windows of one annotation ({@code perSecond}, {@code perMinute}, {@code perHour}, {@code perDay} and
 * {@code limits}) form one bucket and are enforced together: a call passes only when every window has tokens
 * for it. Repeat the annotation to count by several keys at once (a call passes only when every rule allows
 * it); a rule that rejects does not spend the tokens of the others.
 *
 * <p>On a type, the rule applies to every method of the type and is shared: all of them draw on one bucket
 * per key (name it with {@link #name()}, default the simple class name). A method's own annotations add to
 * its type's.
 *
 * <p>Annotations are read and validated once, when the application starts (by the Spring aspect, or by the
 * servlet filter's {@code init}); a bad value fails start-up with a message that names the method.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
@Repeatable(RateLimit.List.class)
public @interface RateLimit {

    /**
     * The rule's name: names its buckets, metrics and headers, and must be unique. Defaults to
     * {@code SimpleClassName#method} on a method (with the parameter types when the method is overloaded),
     * and {@code SimpleClassName} on a type; with several annotations on one element, {@code [i]} is added. A
     * default name is for operators only: clients see a digest of it instead ({@code rule-063364d4fab4} for
     * {@code OrderController#list}; see {@link Rule#publicName()}), while a name given here is also what
     * clients see.
     *
     * @return the rule name, or empty for the default
     */
    String name() default "";

    /**
     * What to count by: {@code global} (one bucket for all callers, the default), {@code ip} (the client
     * address, through trusted proxies only), {@code user} (the authenticated principal), {@code header:<Name>},
     * or the name of a custom key resolver. Combine with {@code +} (all parts, e.g. {@code user+header:X-Tenant})
     * and {@code |} (the first part that resolves, e.g. {@code user|ip}).
     *
     * @return the key expression
     */
    String key() default "global";

    /** @return permits per second, or 0 for none */
    long perSecond() default 0;

    /** @return permits per minute, or 0 for none */
    long perMinute() default 0;

    /** @return permits per hour, or 0 for none */
    long perHour() default 0;

    /** @return permits per day, or 0 for none */
    long perDay() default 0;

    /**
     * Further windows in text form: {@code "10/5s"}, {@code "1000/7d"}, {@code "5/1s burst=20"}.
     *
     * @return limits in addition to the {@code per*} ones
     */
    String[] limits() default {};

    /**
     * The bucket capacity of the shortest {@code per*} window, when it should differ from its permits: with
     * {@code perSecond = 5, burst = 20}, a rested caller may make 20 calls at once, then 5 per second.
     *
     * @return the capacity, or 0 for the window's permits
     */
    long burst() default 0;

    /** @return what happens to a call over the limit */
    Mode mode() default Mode.HARD;

    /**
     * How long a {@link Mode#SOFT} call may wait, in duration text ({@code "500ms"}, {@code "2s"}); required for
     * SOFT, not allowed otherwise.
     *
     * @return the longest wait, or empty
     */
    String maxDelay() default "";

    /**
     * The most calls of this {@link Mode#SOFT} rule that may wait out a delay at once; beyond it a call that would
     * wait is rejected. Each SOFT rule has its own places, so a flood on one cannot take another's.
     *
     * @return the bound, or -1 for the default ({@value Rule#DEFAULT_MAX_WAITING}); only for SOFT rules
     */
    int maxWaiting() default -1;

    /**
     * How long a key stays refused once this rule refused one of its calls, in duration text ({@code "15m"}): during
     * the block every call of the key is refused by this rule, whatever its windows hold (they keep refilling), and
     * {@code Retry-After} says the time left; a call refused meanwhile does not make the block longer. With
     * {@code count = Counted.FAILURES} it locks a user out after too many failed logins:
     * {@code @RateLimit(key = "user", perMinute = 5, count = Counted.FAILURES, blockFor = "15m")}. A SOFT rule blocks
     * when it refuses (a wait beyond {@link #maxDelay()}); a SHADOW rule only records the block. Resetting the key
     * lifts it. At most {@link Rule#MAX_BLOCK_FOR}; not for a concurrency rule.
     *
     * @return the block, or empty (the default) for none
     */
    String blockFor() default "";

    /** @return tokens one call takes */
    long cost() default 1;

    /**
     * Makes this a concurrency rule: at most this many calls per key in flight at once, each holding a slot from its
     * decision until it ends (returns, throws, or its publisher completes, fails or is cancelled), with no windows:
     * {@code @RateLimit(name = "export", key = "user", concurrency = 2)}. HARD rejects a call with no free slot; SOFT
     * waits for one up to {@link #maxDelay()}. For a rate as well, add a second {@code @RateLimit}. On Redis, slots
     * are leases that running calls renew, so a crashed instance's come back within 15 seconds.
     *
     * @return the most calls per key in flight, 1 to {@value Rule#MAX_CONCURRENCY}; 0 (the default) for a rule of
     *         windows
     */
    int concurrency() default 0;

    /**
     * How many permits a call counts as under this rule, computed from the call, e.g. the size of a batch:
     * {@code @RateLimit(name = "batch", key = "ip", perMinute = 10, permits = "#items.size()")} lets 10 items a
     * minute through, however they are split into calls. SpEL over the arguments in Spring (checked at start-up like
     * keys), or a key atom ({@code header:X-Items}). The rule takes {@link #cost()} times that value; 0 counts as 1;
     * leading zeros are ignored ({@code 007} is 7, in decimal); a value that is no whole number (text, a fraction, a
     * sign, nothing) refuses the call; a call of more than a window can hold, however many digits its count has, is
     * refused ({@link CallTooLargeException}, HTTP 413 on the web). Only this annotation's
     * rule is weighed: the method's other rules count the call once.
     *
     * @return the expression, or empty for one permit per call
     */
    String permits() default "";

    /**
     * Charges each call what it used, read once the method has returned: tokens of a language model, rows read, bytes
     * served. {@code @RateLimit(key = "user", limits = "100000/1m", charge = "#result.usage.totalTokens")}: SpEL over
     * {@code #result} (what the method returned; for a {@code CompletionStage} or a publisher, the value it completes
     * with, or its last element) and the arguments, checked at start-up like keys (a reference the method does not
     * provide stops the application). The call is admitted while its key has tokens left and takes its estimate
     * ({@link #permits()}, default 1) when admitted; once it has run, the rule takes the rest of what it used, or gives
     * back what it did not use ({@link Guard#settle}). What it takes beyond what is left is debt: the windows go below
     * zero (a bucket) or past their limit (a sliding counter, a calendar quota), and the key's next calls wait
     * ({@link Mode#SOFT}) or are refused, with a {@code Retry-After} that covers the debt, until the windows allow
     * them again. A window owes at most a day of refill (or its capacity, if more). A method that throws, or whose
     * expression gives no whole number of 0 or more (nothing, text, a fraction, a negative number), keeps its
     * estimate, and that is logged once per rule every 10 s and counted ({@code ratelimit.settlements}). Only this
     * annotation's rule is charged. Token-bucket, fixed-window (calendar quotas included) and sliding-window-counter
     * rules, counting every call, with no concurrency: anything else stops start-up with a message naming the rule.
     *
     * @return the expression, or empty for a rule that does not charge
     */
    String charge() default "";

    /**
     * Which calls the tokens pay for: all admitted calls (the default), or only {@link Counted#FAILURES}, calls that
     * throw (for limiting guesses: {@code @RateLimit(key = "#username", perMinute = 5, count = Counted.FAILURES)} on
     * a login method). {@link Counted#STATUSES} is for URL rules ({@code count=statuses:404}): a method call has no
     * status, and an annotation that names it fails at start-up.
     *
     * @return the calls that keep their tokens
     */
    Counted count() default Counted.ALL;

    /** @return what the rule decides when the store (Redis) fails */
    StoreFailurePolicy onStoreFailure() default StoreFailurePolicy.DEFAULT;

    /** @return what the rule does when the key cannot be resolved */
    MissingKeyPolicy onMissingKey() default MissingKeyPolicy.REJECT;

    /**
     * How the rule counts calls within its windows. {@link Algorithm#TOKEN_BUCKET}, the default, stands for none
     * given (an annotation cannot tell a default from the same value written out): a rule with a calendar quota in
     * {@link #limits()} ({@code 1000/1mo}) is then a {@link Algorithm#FIXED_WINDOW} rule, the only one that counts it;
     * any other algorithm with a calendar quota fails at start-up.
     *
     * @return the algorithm
     */
    Algorithm algorithm() default Algorithm.TOKEN_BUCKET;

    /**
     * The container of repeated {@link RateLimit} annotations; write the annotations themselves instead.
     */
    @Documented
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.METHOD, ElementType.TYPE})
    public @interface List {

        /** @return the repeated annotations */
        RateLimit[] value();
    }
}
