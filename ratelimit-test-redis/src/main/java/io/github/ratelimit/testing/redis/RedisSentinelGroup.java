package io.github.ratelimit.testing.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A real Redis Sentinel deployment: one master, its replica(s) and several sentinels (default: 1
 * replica, 3 sentinels, quorum 2), every process a {@link RedisServer} on 127.0.0.1 with a free port.
 * Sentinels run {@code redis-server sentinel.conf --sentinel} with a generated config monitoring
 * {@link #masterName()} with {@code down-after-milliseconds} 1000 and {@code failover-timeout} 3000.
 *
 * <p>{@link #start()} returns only when every replica is in sync with the master and every sentinel
 * sees the master as healthy, knows every replica (healthy, link ok) and knows every other sentinel,
 * so that a failover can be authorised at once. Otherwise it throws a {@link RedisHarnessException}
 * with the sentinels' views and log tails, and stops every process it started.
 *
 * <p>Data nodes cannot have a password here (sentinels would need {@code auth-pass}).
 */
public final class RedisSentinelGroup implements AutoCloseable {

    /** Master name used unless the builder sets another. */
    public static final String DEFAULT_MASTER_NAME = "mymaster";

    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    private static final int ADMIN_TIMEOUT_MILLIS = 2_000;

    private final String masterName;
    private final List<RedisServer> dataNodes;
    private final List<RedisServer> sentinelServers;
    private final Duration timeout;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile HostAndPort lastKilledMaster;

    /** Starts one master, one replica and three sentinels with default settings. */
    public static RedisSentinelGroup start() {
        return builder().start();
    }

    /** @return a builder; defaults: "mymaster", 1 replica, 3 sentinels, quorum 2, 1000/3000 ms, timeouts 30 s */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures and starts a {@link RedisSentinelGroup}. */
    public static final class Builder {
        private String masterName = DEFAULT_MASTER_NAME;
        private int replicas = 1;
        private int sentinels = 3;
        private int quorum = 2;
        private int downAfterMillis = 1_000;
        private int failoverTimeoutMillis = 3_000;
        private Duration timeout = DEFAULT_TIMEOUT;
        private final List<String> config = new ArrayList<>();
        private RedisBinaries.Binary binary;

        private Builder() {}

        /** Name the sentinels monitor the master under; default {@value #DEFAULT_MASTER_NAME}. */
        public Builder masterName(String masterName) {
            if (masterName == null || !masterName.matches("[A-Za-z0-9._-]+")) {
                throw new IllegalArgumentException("masterName must match [A-Za-z0-9._-]+: " + masterName);
            }
            this.masterName = masterName;
            return this;
        }

        /** Number of replicas of the master; default 1 (at least 1 to test failover). */
        public Builder replicas(int replicas) {
            if (replicas < 0) {
                throw new IllegalArgumentException("replicas must be >= 0: " + replicas);
            }
            this.replicas = replicas;
            return this;
        }

        /** Number of sentinels and the quorum to declare the master down; default 3 and 2. */
        public Builder sentinels(int sentinels, int quorum) {
            if (sentinels < 1 || quorum < 1 || quorum > sentinels) {
                throw new IllegalArgumentException("need 1 <= quorum <= sentinels: " + quorum + "/" + sentinels);
            }
            this.sentinels = sentinels;
            this.quorum = quorum;
            return this;
        }

        /** {@code sentinel down-after-milliseconds}; default 1000. */
        public Builder downAfterMillis(int millis) {
            this.downAfterMillis = positive(millis, "downAfterMillis");
            return this;
        }

        /** {@code sentinel failover-timeout}; default 3000. */
        public Builder failoverTimeoutMillis(int millis) {
            this.failoverTimeoutMillis = positive(millis, "failoverTimeoutMillis");
            return this;
        }

        /** Bound for the group to become ready and, by default, for {@link #awaitFailover()}; default 30 s. */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** Extra {@code redis.conf} lines for the master and replicas (not the sentinels). */
        public Builder config(String... lines) {
            config.addAll(Arrays.asList(lines));
            return this;
        }

        /** Runs this binary instead of {@link RedisBinaries#server()}. */
        public Builder binary(RedisBinaries.Binary binary) {
            this.binary = Objects.requireNonNull(binary, "binary");
            return this;
        }

        /**
         * Starts master, replicas and sentinels and waits until the sentinels are ready to fail over.
         *
         * @throws RedisHarnessException if that does not happen within the timeout (all processes are stopped)
         */
        public RedisSentinelGroup start() {
            List<RedisServer> data = new ArrayList<>();
            List<RedisServer> watchers = new ArrayList<>();
            try {
                data.add(dataNode("sentinel-master").start());
                int masterPort = data.get(0).port();
                for (int i = 0; i < replicas; i++) {
                    data.add(dataNode("sentinel-replica")
                            .config("replicaof " + RedisServer.HOST + " " + masterPort)
                            .start());
                }
                for (int i = 0; i < sentinels; i++) {
                    RedisServer.Builder sentinel = RedisServer.builder()
                            .sentinel()
                            .name("sentinel")
                            .config(
                                    "sentinel monitor " + masterName + " " + RedisServer.HOST + " " + masterPort + " "
                                            + quorum,
                                    "sentinel down-after-milliseconds " + masterName + " " + downAfterMillis,
                                    "sentinel failover-timeout " + masterName + " " + failoverTimeoutMillis,
                                    "sentinel parallel-syncs " + masterName + " 1");
                    if (binary != null) {
                        sentinel.binary(binary);
                    }
                    watchers.add(sentinel.start());
                }
                RedisSentinelGroup group = new RedisSentinelGroup(masterName, data, watchers, timeout);
                group.awaitReady(replicas, sentinels);
                return group;
            } catch (RuntimeException | Error e) {
                Cleanup.closeAll(
                        Stream.concat(watchers.stream(), reversed(data).stream())
                                .toList(),
                        e);
                throw e;
            }
        }

        private RedisServer.Builder dataNode(String name) {
            RedisServer.Builder node = RedisServer.builder()
                    .name(name)
                    .config("repl-diskless-sync yes", "repl-diskless-sync-delay 0")
                    .config(config.toArray(String[]::new));
            if (binary != null) {
                node.binary(binary);
            }
            return node;
        }

        private static int positive(int value, String what) {
            if (value <= 0) {
                throw new IllegalArgumentException(what + " must be positive: " + value);
            }
            return value;
        }
    }

    private RedisSentinelGroup(
            String masterName, List<RedisServer> dataNodes, List<RedisServer> sentinels, Duration timeout) {
        this.masterName = masterName;
        this.dataNodes = List.copyOf(dataNodes);
        this.sentinelServers = List.copyOf(sentinels);
        this.timeout = timeout;
    }

    /** @return the name the sentinels monitor the master under */
    public String masterName() {
        return masterName;
    }

    /** @return the sentinels' addresses, to give to a sentinel-aware client */
    public Set<HostAndPort> sentinels() {
        Set<HostAndPort> set = new LinkedHashSet<>();
        sentinelServers.forEach(s -> set.add(s.hostAndPort()));
        return Collections.unmodifiableSet(set);
    }

    /** @return the master address as reported now by the first sentinel that answers */
    public HostAndPort master() {
        JedisException last = null;
        for (RedisServer sentinel : sentinelServers) {
            if (sentinel.isAlive() && !sentinel.isPaused()) {
                try {
                    return masterAccordingTo(sentinel);
                } catch (JedisException e) {
                    last = e;
                }
            }
        }
        throw new RedisHarnessException("No sentinel answered for " + masterName, last);
    }

    /** @return master and replicas (whatever their current roles), in start order */
    public List<HostAndPort> dataNodes() {
        return dataNodes.stream().map(RedisServer::hostAndPort).toList();
    }

    /** @return the server behind a data node or sentinel address, to control it individually */
    public RedisServer server(HostAndPort address) {
        return Stream.concat(dataNodes.stream(), sentinelServers.stream())
                .filter(s -> s.port() == address.getPort() && s.host().equals(address.getHost()))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("Not part of this group: " + address));
    }

    /**
     * Kills (SIGKILL) the current master (per {@link #master()}).
     *
     * @return its address
     */
    public HostAndPort killMaster() {
        HostAndPort master = master();
        server(master).kill();
        lastKilledMaster = master;
        return master;
    }

    /** {@link #awaitFailover(Duration)} with the group's timeout (default 30 s). */
    public HostAndPort awaitFailover() {
        return awaitFailover(timeout);
    }

    /**
     * Waits until every live sentinel reports the same master, that master is not the one last
     * killed by {@link #killMaster()}, its process is alive and it reports role master, the sentinels
     * no longer flag it down or in failover, and every other live data node replicates from it.
     *
     * @return the new master's address
     * @throws RedisHarnessException on timeout, with the sentinels' views and log tails
     */
    public HostAndPort awaitFailover(Duration timeout) {
        HostAndPort[] result = new HostAndPort[1];
        Waits.until(
                timeout,
                "sentinel failover of " + masterName + " away from " + lastKilledMaster,
                () -> {
                    HostAndPort agreed = null;
                    for (RedisServer sentinel : sentinelServers) {
                        if (!sentinel.isAlive() || sentinel.isPaused()) {
                            continue;
                        }
                        HostAndPort reported = masterAccordingTo(sentinel);
                        if (agreed != null && !agreed.equals(reported)) {
                            return false;
                        }
                        agreed = reported;
                        try (Jedis jedis = sentinel.admin(ADMIN_TIMEOUT_MILLIS)) {
                            if (!"master"
                                    .equals(jedis.sentinelMaster(masterName).get("flags"))) {
                                return false;
                            }
                        }
                    }
                    if (agreed == null || agreed.equals(lastKilledMaster)) {
                        return false;
                    }
                    RedisServer master = server(agreed);
                    if (!master.isAlive() || !"master".equals(role(master))) {
                        return false;
                    }
                    for (RedisServer node : dataNodes) {
                        if (node != master && node.isAlive() && !node.isPaused() && !replicatesFrom(node, master)) {
                            return false;
                        }
                    }
                    result[0] = agreed;
                    return true;
                },
                this::diagnostics);
        return result[0];
    }

    /** Stops the sentinels, then the replicas, then the master, and deletes their temp dirs. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            Cleanup.closeAll(
                    Stream.concat(sentinelServers.stream(), reversed(dataNodes).stream())
                            .toList(),
                    null);
        }
    }

    @Override
    public String toString() {
        return "RedisSentinelGroup[" + masterName + " data=" + dataNodes() + " sentinels=" + sentinels() + "]";
    }

    // ------------------------------------------------------------------------------------------

    private void awaitReady(int replicas, int sentinels) {
        RedisServer master = dataNodes.get(0);
        Waits.until(
                timeout,
                "replicas of " + master.hostAndPort() + " to be in sync",
                () -> {
                    for (RedisServer replica : dataNodes.subList(1, dataNodes.size())) {
                        if (!replicatesFrom(replica, master)) {
                            return false;
                        }
                    }
                    return true;
                },
                this::diagnostics);
        Waits.until(
                timeout,
                "sentinels to see the master, " + replicas + " replica(s) and " + (sentinels - 1)
                        + " other sentinel(s)",
                () -> {
                    for (RedisServer sentinel : sentinelServers) {
                        try (Jedis jedis = sentinel.admin(ADMIN_TIMEOUT_MILLIS)) {
                            Map<String, String> state = jedis.sentinelMaster(masterName);
                            if (!"master".equals(state.get("flags"))
                                    || !String.valueOf(replicas).equals(state.get("num-slaves"))
                                    || !String.valueOf(sentinels - 1).equals(state.get("num-other-sentinels"))
                                    || !master.hostAndPort()
                                            .equals(new HostAndPort(
                                                    state.get("ip"), Integer.parseInt(state.get("port"))))) {
                                return false;
                            }
                            for (Map<String, String> replica : jedis.sentinelReplicas(masterName)) {
                                if (!"slave".equals(replica.get("flags"))
                                        || !"ok".equals(replica.get("master-link-status"))) {
                                    return false;
                                }
                            }
                        }
                    }
                    return true;
                },
                this::diagnostics);
    }

    private HostAndPort masterAccordingTo(RedisServer sentinel) {
        try (Jedis jedis = sentinel.admin(ADMIN_TIMEOUT_MILLIS)) {
            List<String> address = jedis.sentinelGetMasterAddrByName(masterName);
            if (address == null || address.size() != 2) {
                throw new RedisHarnessException(sentinel + " does not know master " + masterName);
            }
            return new HostAndPort(address.get(0), Integer.parseInt(address.get(1)));
        }
    }

    private static String role(RedisServer node) {
        try (Jedis jedis = node.admin(ADMIN_TIMEOUT_MILLIS)) {
            return RedisCluster.parseInfo(jedis.info("replication")).get("role");
        }
    }

    private static boolean replicatesFrom(RedisServer replica, RedisServer master) {
        try (Jedis jedis = replica.admin(ADMIN_TIMEOUT_MILLIS)) {
            Map<String, String> info = RedisCluster.parseInfo(jedis.info("replication"));
            return "slave".equals(info.get("role"))
                    && String.valueOf(master.port()).equals(info.get("master_port"))
                    && "up".equals(info.get("master_link_status"))
                    && "0".equals(info.get("master_sync_in_progress"));
        }
    }

    private String diagnostics() {
        StringBuilder out =
                new StringBuilder("Sentinel group ").append(masterName).append(":\n");
        for (RedisServer node : dataNodes) {
            out.append("* data ").append(node);
            if (node.isAlive() && !node.isPaused()) {
                try (Jedis jedis = node.admin(ADMIN_TIMEOUT_MILLIS)) {
                    Map<String, String> info = RedisCluster.parseInfo(jedis.info("replication"));
                    out.append(" role=")
                            .append(info.get("role"))
                            .append(" master_port=")
                            .append(info.get("master_port"))
                            .append(" link=")
                            .append(info.get("master_link_status"))
                            .append(" connected_slaves=")
                            .append(info.get("connected_slaves"));
                } catch (JedisException e) {
                    out.append(" (unreachable: ").append(e.getMessage()).append(')');
                }
            }
            out.append('\n');
        }
        for (RedisServer sentinel : sentinelServers) {
            out.append("* sentinel ").append(sentinel);
            if (sentinel.isAlive() && !sentinel.isPaused()) {
                try (Jedis jedis = sentinel.admin(ADMIN_TIMEOUT_MILLIS)) {
                    Map<String, String> state = jedis.sentinelMaster(masterName);
                    out.append(" master=")
                            .append(state.get("ip"))
                            .append(':')
                            .append(state.get("port"))
                            .append(" flags=")
                            .append(state.get("flags"))
                            .append(" num-slaves=")
                            .append(state.get("num-slaves"))
                            .append(" num-other-sentinels=")
                            .append(state.get("num-other-sentinels"))
                            .append(" failover-state=")
                            .append(state.get("failover-state"));
                } catch (JedisException e) {
                    out.append(" (unreachable: ").append(e.getMessage()).append(')');
                }
            }
            out.append('\n');
        }
        Stream.concat(dataNodes.stream(), sentinelServers.stream())
                .forEach(s -> out.append(s.logTail()).append('\n'));
        return out.toString();
    }

    private static List<RedisServer> reversed(List<RedisServer> servers) {
        List<RedisServer> copy = new ArrayList<>(servers);
        Collections.reverse(copy);
        return copy;
    }
}
