package io.github.ratelimit.redis;

import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.remote.CommandResult;
import io.github.bucket4j.distributed.remote.RemoteVerboseResult;
import io.github.bucket4j.distributed.remote.commands.TryConsumeAndReturnRemainingTokensCommand;
import io.github.bucket4j.distributed.remote.commands.VerboseCommand;
import io.github.ratelimit.internal.bucket.BucketKeyState;
import io.github.ratelimit.internal.bucket.Pipelining;
import io.github.ratelimit.store.BucketStore.KeyState;

/**
 * A token-bucket or fixed-window key in Redis whose consume can also be started apart ({@link Pipelining}), for one
 * round trip per request however many rules it meets. A consume called directly goes through the Bucket4j proxy (and
 * its batching of concurrent calls on one key); a consume started apart sends its compare-and-set at once, unless
 * another call of this JVM is already on its way for the key: then it waits its turn through the proxy as a direct
 * call would, because a compare-and-set computed from a state about to change would only conflict.
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
        if (CasProxyManager.busy(ref)) {
            return () -> proxy.consume(cost);
        }
        CasProxyManager.Command<RemoteVerboseResult<ConsumptionProbe>> command = proxies.send(ref,
                proxies.request(VerboseCommand.from(new TryConsumeAndReturnRemainingTokensCommand(cost))));
        return () -> {
            CommandResult<RemoteVerboseResult<ConsumptionProbe>> result = command.await();
            if (result.isError() || result.isBucketNotFound() || result.isConfigurationNeedToBeReplaced()) {
                // The create-or-replace command around every command answers neither; a reply that did would be a bug.
                throw new IllegalStateException("Bucket4j answered a consume with result type "
                        + result.getResultTypeId());
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

    @Override
    public void refund(long cost, long receipt) {
        proxy.refund(cost, receipt);
    }
}
