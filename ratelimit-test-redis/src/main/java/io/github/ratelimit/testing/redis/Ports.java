package io.github.ratelimit.testing.redis;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Picks probably-free loopback ports. "Probably": another process may grab the port between our
 * probe and redis-server's bind, so callers must retry on a bind failure. Ports held by servers of
 * this JVM that are not closed (including killed ones waiting for a restart) are reserved and never
 * handed out twice.
 */
final class Ports {

    static final String LOOPBACK = "127.0.0.1";
    /** Redis Cluster's bus listens on the data port + 10000 (Redis 6.2 cannot configure it). */
    static final int CLUSTER_BUS_OFFSET = 10_000;

    private static final Set<Integer> RESERVED = ConcurrentHashMap.newKeySet();

    private Ports() {}

    /**
     * Reserves and returns a port that was free on 127.0.0.1 a moment ago; with {@code clusterBus}
     * the port + 10000 was free as well.
     */
    static int reserve(boolean clusterBus) {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = probeEphemeral();
            if (clusterBus && (port + CLUSTER_BUS_OFFSET > 65_535 || !isFree(port + CLUSTER_BUS_OFFSET))) {
                continue;
            }
            if (!RESERVED.add(port)) {
                continue;
            }
            if (clusterBus && !RESERVED.add(port + CLUSTER_BUS_OFFSET)) {
                RESERVED.remove(port);
                continue;
            }
            return port;
        }
        throw new RedisHarnessException(
                "Could not find a free loopback port" + (clusterBus ? " pair (port, port+10000)" : ""));
    }

    static void release(int port, boolean clusterBus) {
        RESERVED.remove(port);
        if (clusterBus) {
            RESERVED.remove(port + CLUSTER_BUS_OFFSET);
        }
    }

    private static int probeEphemeral() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getByName(LOOPBACK), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new RedisHarnessException("Could not open a probe socket on " + LOOPBACK, e);
        }
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getByName(LOOPBACK), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
