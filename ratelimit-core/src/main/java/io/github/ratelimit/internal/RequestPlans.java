package io.github.ratelimit.internal;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Plans chosen by the call itself ({@code ratelimit.plan-from}): a plan a trusted gateway names in a header, a
 * user's granted authority. For the keys of the rules it applies to that have no limits of their own from the limit
 * provider. Immutable; thread-safe.
 *
 * <h2>A plan header is believed only from a trusted proxy</h2>
 * Any client can send any header, so a {@code header:<Name>} of the built-in grammar is read only when the call's
 * socket peer is a trusted proxy ({@code ratelimit.trusted-proxies}, the list the {@code ip} key and the exemptions
 * believe forwarding headers from); a call from any other peer names no plan and gets the rule's own limits. A limiter
 * that reads its plan from a header but trusts no proxy would believe no call at all, so it is refused when built,
 * unless the operator says that whatever reaches the application sets the header
 * ({@code ratelimit.plan-header-trusted=true}): the header is then believed from every peer. Expressions of the
 * key-resolver factory (SpEL, {@code authority:<prefix>}) and custom resolvers read what their author chose; they are
 * not vetted.
 *
 * <h2>A source that never names a plan is reported once</h2>
 * A plan read from something set too late (a request attribute a filter sets after the rate-limit filter has run),
 * or from a header that only untrusted peers send, names no plan on any call, silently: every key gets the rule's own
 * limits. So when no call of the first minute (on the limiter's clock, from the first call that asked) named a plan,
 * the first call after it logs one warning; a source that named a plan in its first minute is never reported.
 */
final class RequestPlans {

    /** The source the limiter compiles the expression under: the starter's factories know it by this name. */
    static final String WHERE = "plan-from";

    /** How long a source may name no plan before it is reported. */
    static final long WATCH_NANOS = 60_000_000_000L;

    private static final RateLimitedLog LOG = new RateLimitedLog(10_000_000_000L);
    private static final System.Logger WARNING_LOG = System.getLogger("io.github.ratelimit");
    private static final long NOT_YET = Long.MIN_VALUE;

    private final String expression;
    private final KeyResolver resolver;
    private final Map<String, List<Limit>> plans;
    private final Set<String> rules;
    private final TimeMeter clock;
    /** When the first call asked for its plan, or {@link #NOT_YET}. */
    private final AtomicLong firstCall = new AtomicLong(NOT_YET);
    /** Whether watching is over: a plan was named within the first minute, or the minute is over. */
    private volatile boolean watched;

    private final AtomicBoolean warned = new AtomicBoolean();

    private RequestPlans(String expression, KeyResolver resolver, DefaultRateLimiter.Settings settings) {
        this.expression = expression;
        this.resolver = resolver;
        this.plans = settings.plans().byName();
        this.rules = settings.plans().rules();
        this.clock = settings.timing().timeMeter();
    }

    /**
     * @param settings the limiter's settings, with a {@link DefaultRateLimiter.Settings.Plans#from() plan-from}
     * @return the plans chosen by the call
     * @throws InvalidRateLimitConfigurationException when the expression is unknown, or reads a header while no proxy
     *         is trusted and the header is not declared trusted
     */
    static RequestPlans of(DefaultRateLimiter.Settings settings) {
        String expression = settings.plans().from();
        KeyResolver.Factory factory = settings.keys().factory();
        KeyResolver own = factory == null ? null : factory.create(expression, WHERE);
        if (own != null) {
            // SpEL or authority:<prefix>: whatever it reads is its author's choice.
            return new RequestPlans(expression, own, settings);
        }
        ClientIpResolver clientIp = settings.keys().clientIpResolver();
        String header = KeyExpressions.atoms(expression).stream()
                .filter(a -> a.startsWith("header:"))
                .findFirst()
                .map(a -> a.substring("header:".length()).trim())
                .orElse(null);
        boolean headerTrusted = settings.plans().headerTrusted();
        if (header != null && !headerTrusted && !clientIp.readsForwardedHeader()) {
            throw new InvalidRateLimitConfigurationException(
                    "ratelimit.plan-from",
                    expression,
                    "'" + expression
                            + "' takes the plan from the request header " + header
                            + ", which any client can send, and no "
                            + "proxy is trusted to set it (ratelimit.trusted-proxies is empty), so the header would be believed "
                            + "from anyone: a client sending '" + header + ": <plan>' would choose its own limits",
                    "List the proxies that set the header in ratelimit.trusted-proxies (it is then believed from them "
                            + "only; a call from any other peer gets the rule's own limits), or, when nothing can reach the "
                            + "application without passing something that sets or removes the header, say so with "
                            + "ratelimit.plan-header-trusted=true. In code: RateLimiter.Builder.clientIpResolver with "
                            + "trustedProxies, or planHeaderTrusted(true).");
        }
        Predicate<RequestContext> believed =
                headerTrusted ? null : context -> clientIp.isTrustedProxy(context.remoteAddress());
        KeyResolver resolver =
                KeyExpressions.compileValue(expression, settings.keys().resolvers(), clientIp, null, WHERE, believed);
        return new RequestPlans(expression, resolver, settings);
    }

    /** @return the plans by name */
    Map<String, List<Limit>> plans() {
        return plans;
    }

    /**
     * @param rule a rule
     * @return whether the call's plan applies to it
     */
    boolean appliesTo(Rule rule) {
        // A concurrency rule has no windows for a plan to replace: plans are for it only when named (and then refused).
        return rules.isEmpty()
                ? rule.concurrency() == 0 && KeyExpressions.atoms(rule.key()).contains("user")
                : rules.contains(rule.name());
    }

    /**
     * @param context a call
     * @return the plan the call names, or {@code null} when it names none (or its resolver fails, or it names it in a
     *         header from a peer that is not a trusted proxy)
     */
    String planOf(RequestContext context) {
        String plan;
        try {
            plan = resolver.resolve(context);
        } catch (RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "Resolving the plan of a call (ratelimit.plan-from) failed; the rule's own limits " + "apply",
                    e);
            plan = null;
        }
        if (!watched) {
            watch(plan != null);
        }
        return plan;
    }

    /** Ends watching when a plan is named within the first minute; warns once when none was by its end. */
    private void watch(boolean named) {
        long now = clock.currentTimeNanos();
        long first = firstCall.get();
        if (first == NOT_YET) {
            first = firstCall.compareAndSet(NOT_YET, now) ? now : firstCall.get();
        }
        if (now - first < WATCH_NANOS) {
            if (named) {
                watched = true;
            }
            return;
        }
        watched = true;
        if (warned.compareAndSet(false, true)) {
            WARNING_LOG.log(
                    Level.WARNING,
                    "ratelimit.plan-from '" + expression + "' named no plan for any call in "
                            + "its first minute: every key got its rule's own limits. If the plan is a request attribute, the "
                            + "filter that sets it must run before the rate-limit filter (Spring Boot: order -99, "
                            + "ratelimit.filter.order); a plan header is believed only from ratelimit.trusted-proxies; check "
                            + "the header's or the authority's name. (Logged once.)");
        }
    }
}
