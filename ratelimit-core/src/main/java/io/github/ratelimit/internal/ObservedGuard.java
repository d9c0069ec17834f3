package io.github.ratelimit.internal;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;

/**
 * A guard whose decisions a {@link RateLimiter.Observer} hears of, from their start to their end. Only a limiter
 * with an observer wraps its guards in one, so a limiter without pays nothing. Immutable; thread-safe.
 *
 * <p>A call that a bucket in this JVM allows at once ({@link DefaultGuard#decideAtOnce}) is not observed: it takes a
 * fraction of a microsecond, less than an observation costs (with Spring Boot Actuator's meter handler, several
 * times the decision). What operators read is observed: every decision that asks a remote store, waits, or is
 * refused, and every decision of several rules. The {@code ratelimit.requests} counter counts every decision.
 */
final class ObservedGuard implements Guard {

    private static final RateLimitedLog LOG = new RateLimitedLog(10_000_000_000L);

    private final DefaultGuard guard;
    private final RateLimiter.Observer observer;

    ObservedGuard(DefaultGuard guard, RateLimiter.Observer observer) {
        this.guard = guard;
        this.observer = observer;
    }

    @Override
    public List<Rule> rules() {
        return guard.rules();
    }

    @Override
    public Decision acquire(RequestContext context, long permits) {
        String key = guard.aloneKey(context, permits);
        Decision atOnce = key == null ? null : guard.decideAtOnce(key);
        if (atOnce != null) {
            return atOnce;
        }
        RateLimiter.Observer.Stop stop = start(context);
        Decision decision;
        try {
            decision = guard.acquireEvaluated(context, permits, key);
        } catch (RuntimeException | Error e) {
            stop(stop, null, e);
            throw e;
        }
        stop(stop, decision, null);
        return decision;
    }

    @Override
    public CompletableFuture<Decision> acquireAsync(RequestContext context, long permits) {
        String key = guard.aloneKey(context, permits);
        Decision atOnce = key == null ? null : guard.decideAtOnce(key);
        if (atOnce != null) {
            return CompletableFuture.completedFuture(atOnce);
        }
        RateLimiter.Observer.Stop stop = start(context);
        CompletableFuture<Decision> decision;
        try {
            decision = guard.acquireAsyncEvaluated(context, permits, key);
        } catch (RuntimeException | Error e) {
            stop(stop, null, e);
            throw e;
        }
        if (decision.isDone()) {
            // The common case (no wait): ended here, with no callback to register.
            stop(stop, decision.getNow(null), null);
        } else {
            decision.whenComplete((d, failure) -> stop(stop, d, failure));
        }
        return decision;
    }

    private RateLimiter.Observer.Stop start(RequestContext context) {
        try {
            RateLimiter.Observer.Stop stop = observer.start(guard.rules(), context);
            if (stop != null) {
                return stop;
            }
            LOG.log(Level.WARNING, "A rate-limit observer returned no Stop: " + observer, null);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "A rate-limit observer failed to start: " + observer, e);
        }
        return (decision, failure) -> {};
    }

    private void stop(RateLimiter.Observer.Stop stop, Decision decision, Throwable failure) {
        try {
            stop.stop(decision, failure);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "A rate-limit observer failed to stop: " + observer, e);
        }
    }

    @Override
    public Decision peek(RequestContext context, long permits) {
        return guard.peek(context, permits);
    }

    @Override
    public boolean settlesOnCompletion() {
        return guard.settlesOnCompletion();
    }

    @Override
    public void completed(Decision decision, boolean failed, int status) {
        guard.completed(decision, failed, status);
    }

    @Override
    public Decision refund(Decision decision) {
        return guard.refund(decision);
    }

    @Override
    public void settle(Decision decision, ToLongFunction<Rule> actual) {
        guard.settle(decision, actual);
    }

    @Override
    public boolean charges() {
        return guard.charges();
    }
}
