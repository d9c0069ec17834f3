package io.github.ratelimit.redis;

import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.remote.CommandResult;
import io.github.bucket4j.distributed.remote.RemoteVerboseResult;
import io.github.bucket4j.distributed.remote.commands.AddTokensCommand;
import io.github.bucket4j.distributed.remote.commands.TryConsumeAndReturnRemainingTokensCommand;
import io.github.bucket4j.distributed.remote.commands.VerboseCommand;
import io.github.ratelimit.internal.bucket.BucketKeyState;
import io.github.ratelimit.internal.bucket.Pipelining;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.store.RateLimitStoreException;

/**
 * A token-bucket or fixed-window key in Redis whose consume can also be started apart ({@link Pipelining}), for one
 * round trip per request however many rules it meets. Either way the command goes through the key's queue in
 * {@link CasProxyManager}: sent at once when no other command of this JVM is on its way for the key, else combined
 * with the others waiting into the key's next compare-and-set ({@link BucketCommand}), so this JVM's calls on one
 * key never conflict with each other.
 */
final class RedisBucketState implements KeyState, Pipelining {

    private final BucketKeyState proxy;
    private final CasProxyManager.Ref ref;
    private final CasProxyManager proxies;

    /**
     * @param proxy the key's state through its Bucket4j proxy
     * @param ref the bucket the proxy writes through
     * @param proxies the proxies' manager, which sends the commands
     */
    RedisBucketState(BucketKeyState proxy, CasProxyManager.Ref ref, CasProxyManager proxies) {
        this.proxy = proxy;
        this.ref = ref;
        this.proxies = proxies;
    }

    @Override
    public Probe consume(long cost) {
        return proxy.consume(cost);
    }

    @Override
    public Sent send(long cost) {
        BucketCommand<RemoteVerboseResult<ConsumptionProbe>> command = proxies.send(
                ref, proxies.request(VerboseCommand.from(new TryConsumeAndReturnRemainingTokensCommand(cost))));
        return () -> {
            CommandResult<RemoteVerboseResult<ConsumptionProbe>> result = command.await();
            if (result.isError() || result.isBucketNotFound() || result.isConfigurationNeedToBeReplaced()) {
                // The create-or-replace command around every command answers neither; a reply that did would be a bug.
                throw new IllegalStateException(
                        "Bucket4j answered a consume with result type " + result.getResultTypeId());
            }
            return BucketKeyState.probe(result.getData().asLocal());
        };
    }

    @Override
    public Probe peek(long cost) {
        return proxy.peek(cost);
    }

    @Override
    public Probe reserve(long cost, long maxWaitNanos) {
        return proxy.reserve(cost, maxWaitNanos);
    }

    /**
     * Takes what a call used, in one compare-and-set ({@link ChargeCommand}). When Redis fails, the charge is lost
     * (the call keeps what it took when admitted): it is not tried again, as a charge made late would land on a bucket
     * that may have moved on; the caller logs and counts it.
     */
    @Override
    public long charge(long tokens) {
        CommandResult<Long> result =
                proxies.send(ref, proxies.request(new ChargeCommand(tokens))).await();
        if (result.isError() || result.isBucketNotFound() || result.isConfigurationNeedToBeReplaced()) {
            throw new IllegalStateException("Bucket4j answered a charge with result type " + result.getResultTypeId());
        }
        return result.getData();
    }

    /**
     * Gives the tokens back (tokens are interchangeable: the receipt is not needed). When Redis fails at that moment,
     * they are given back later, off the request path ({@link CasProxyManager#refundLate}); this never throws for it.
     */
    @Override
    public void refund(long cost, long receipt) {
        try {
            proxies.send(ref, proxies.request(new AddTokensCommand(cost))).await();
        } catch (RateLimitStoreException e) {
            proxies.refundLate(ref, cost, e);
        }
    }
}
