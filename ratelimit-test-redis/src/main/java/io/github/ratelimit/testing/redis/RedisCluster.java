package io.github.ratelimit.testing.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A real Redis Cluster of {@code masters} masters with {@code replicasPerMaster} replicas each, every
 * node a {@link RedisServer} on 127.0.0.1 (free data port p, cluster bus on p + 10000).
 *
 * <p>The cluster is formed with plain commands (no {@code redis-cli}): each master gets an even,
 * contiguous share of the 16384 slots ({@code CLUSTER ADDSLOTS}, which every supported version has)
 * and a distinct config epoch, all nodes are introduced with {@code CLUSTER MEET}, then each replica
 * runs {@code CLUSTER REPLICATE}. {@link #start} returns only when every node reports
 * {@code cluster_state:ok} with all slots assigned, every node sees the planned topology, and every
 * replica's link to its master is up and its initial sync done. Otherwise it throws a
 * {@link RedisHarnessException} with each node's view and log tail, and stops every node it started.
 *
 * <p>Nodes use {@code cluster-node-timeout} 1000 ms by default and
 * {@code cluster-replica-validity-factor 0} (any replica may take over), so a failover after
 * {@link #killMaster(int)} typically completes in 2–4 s.
 */
public final class RedisCluster implements AutoCloseable {

    /** Number of hash slots in Redis Cluster. */
    public static final int SLOTS = 16_384;

    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    static final int ADMIN_TIMEOUT_MILLIS = 2_000;

    private final List<RedisServer> servers;
    private final Duration timeout;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Starts and forms a cluster with default settings.
     *
     * @param masters number of masters, 1..16384 (3 for a realistic cluster)
     * @param replicasPerMaster replicas per master, 0 or more (at least 1 to test failover)
     */
    public static RedisCluster start(int masters, int replicasPerMaster) {
        return builder().masters(masters).replicasPerMaster(replicasPerMaster).start();
    }

    /** @return a builder; defaults: 3 masters, 0 replicas, node timeout 1000 ms, timeouts 30 s */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures and starts a {@link RedisCluster}. */
    public static final class Builder {
        private int masters = 3;
        private int replicasPerMaster = 0;
        private int nodeTimeoutMillis = 1_000;
        private Duration timeout = DEFAULT_TIMEOUT;
        private final List<String> config = new ArrayList<>();
        private RedisBinaries.Binary binary;

        private Builder() {}

        /** Number of masters (slot owners); default 3. */
        public Builder masters(int masters) {
            if (masters < 1 || masters > SLOTS) {
                throw new IllegalArgumentException("masters must be 1.." + SLOTS + ": " + masters);
            }
            this.masters = masters;
            return this;
        }

        /** Replicas per master; default 0. */
        public Builder replicasPerMaster(int replicas) {
            if (replicas < 0) {
                throw new IllegalArgumentException("replicasPerMaster must be >= 0: " + replicas);
            }
            this.replicasPerMaster = replicas;
            return this;
        }

        /** {@code cluster-node-timeout}; default 1000 ms. Failure detection takes about this long. */
        public Builder nodeTimeoutMillis(int millis) {
            if (millis < 100) {
                throw new IllegalArgumentException("nodeTimeoutMillis must be >= 100: " + millis);
            }
            this.nodeTimeoutMillis = millis;
            return this;
        }

        /** Bound for forming the cluster and, by default, for {@link #awaitFailover()}; default 30 s. */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** Extra {@code redis.conf} lines for every node (see {@link RedisServer.Builder#config}). */
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
         * Starts all nodes, forms the cluster and waits until it is healthy.
         *
         * @throws RedisHarnessException if that does not happen within the timeout (all nodes are stopped)
         */
        public RedisCluster start() {
            List<RedisServer> started = new ArrayList<>();
            try {
                int total = masters * (1 + replicasPerMaster);
                for (int i = 0; i < total; i++) {
                    RedisServer.Builder node = RedisServer.builder()
                            .name("cluster")
                            .config(
                                    "cluster-enabled yes",
                                    "cluster-config-file nodes.conf",
                                    "cluster-node-timeout " + nodeTimeoutMillis,
                                    "cluster-replica-validity-factor 0",
                                    "repl-diskless-sync yes",
                                    "repl-diskless-sync-delay 0")
                            .config(config.toArray(String[]::new));
                    if (binary != null) {
                        node.binary(binary);
                    }
                    started.add(node.start());
                }
                RedisCluster cluster = new RedisCluster(started, timeout);
                new ClusterFormation(cluster.servers, timeout, cluster::diagnostics).form(masters, replicasPerMaster);
                return cluster;
            } catch (RuntimeException | Error e) {
                Cleanup.closeAll(reversed(started), e);
                throw e;
            }
        }
    }

    private RedisCluster(List<RedisServer> servers, Duration timeout) {
        this.servers = List.copyOf(servers);
        this.timeout = timeout;
    }

    /** @return every node started, masters first (in slot order) then replicas, whatever their current role or state */
    public List<HostAndPort> nodes() {
        return servers.stream().map(RedisServer::hostAndPort).toList();
    }

    /**
     * @return the current slot-owning masters whose process is alive, ordered by their lowest slot,
     *     as seen by the first node that answers
     */
    public List<HostAndPort> masters() {
        List<ClusterNode> view = anyView();
        return view.stream()
                .filter(n -> n.isMaster() && !n.isFailing() && n.slotCount() > 0 && isAlive(n.address()))
                .sorted(Comparator.comparingInt(ClusterNode::firstSlot))
                .map(ClusterNode::address)
                .toList();
    }

    /** @return the live, healthy replicas currently replicating {@code master}, ordered by port */
    public List<HostAndPort> replicasOf(HostAndPort master) {
        List<ClusterNode> view = anyView();
        String masterId = view.stream()
                .filter(n -> n.address().equals(master))
                .map(ClusterNode::id)
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("Not a node of this cluster: " + master));
        return view.stream()
                .filter(n -> n.isReplica() && masterId.equals(n.masterId()) && !n.isFailing() && isAlive(n.address()))
                .map(ClusterNode::address)
                .sorted(Comparator.comparingInt(HostAndPort::getPort))
                .toList();
    }

    /** @return the server behind {@code node}, to pause, resume, kill or restart it individually */
    public RedisServer server(HostAndPort node) {
        return servers.stream()
                .filter(s -> s.port() == node.getPort() && s.host().equals(node.getHost()))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("Not a node of this cluster: " + node));
    }

    /**
     * Kills (SIGKILL) the master at {@code index} of {@link #masters()}.
     *
     * @return the address of the killed master
     */
    public HostAndPort killMaster(int index) {
        List<HostAndPort> masters = masters();
        if (index < 0 || index >= masters.size()) {
            throw new IndexOutOfBoundsException("master index " + index + " of " + masters);
        }
        HostAndPort victim = masters.get(index);
        server(victim).kill();
        return victim;
    }

    /** {@link #awaitFailover(Duration)} with the cluster's timeout (default 30 s). */
    public List<HostAndPort> awaitFailover() {
        return awaitFailover(timeout);
    }

    /**
     * Waits until every live, unpaused node reports {@code cluster_state:ok} and sees all 16384 slots
     * served by masters whose process is alive, i.e. until replicas have taken over from killed
     * masters. Needs at least one replica per killed master.
     *
     * @return the masters afterwards, as {@link #masters()}
     * @throws RedisHarnessException on timeout, with every node's view and log tail
     */
    public List<HostAndPort> awaitFailover(Duration timeout) {
        Waits.until(
                timeout,
                "cluster failover: every live node cluster_state:ok with all slots served by live masters",
                () -> {
                    List<RedisServer> live = servers.stream()
                            .filter(s -> s.isAlive() && !s.isPaused())
                            .toList();
                    if (live.isEmpty()) {
                        throw new RedisHarnessException("No cluster node is running");
                    }
                    for (RedisServer server : live) {
                        if (!"ok".equals(info(server).get("cluster_state"))) {
                            return false;
                        }
                        int served = view(server).stream()
                                .filter(n -> n.isMaster() && !n.isFailing() && isAlive(n.address()))
                                .mapToInt(ClusterNode::slotCount)
                                .sum();
                        if (served != SLOTS) {
                            return false;
                        }
                    }
                    return true;
                },
                this::diagnostics);
        return masters();
    }

    /** Stops every node (replicas first) and deletes their temp directories. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            Cleanup.closeAll(reversed(servers), null);
        }
    }

    @Override
    public String toString() {
        return "RedisCluster" + nodes();
    }

    // ------------------------------------------------------------------------------------------

    private boolean isAlive(HostAndPort address) {
        return servers.stream()
                .anyMatch(s -> s.port() == address.getPort() && s.host().equals(address.getHost()) && s.isAlive());
    }

    private List<ClusterNode> anyView() {
        JedisException last = null;
        for (RedisServer server : servers) {
            if (server.isAlive() && !server.isPaused()) {
                try {
                    return view(server);
                } catch (JedisException e) {
                    last = e;
                }
            }
        }
        throw new RedisHarnessException("No cluster node answered CLUSTER NODES: " + this, last);
    }

    /** @return {@code server}'s {@code CLUSTER NODES}, parsed */
    static List<ClusterNode> view(RedisServer server) {
        try (Jedis jedis = server.admin(ADMIN_TIMEOUT_MILLIS)) {
            return ClusterNode.parseAll(jedis.clusterNodes());
        }
    }

    /** @return {@code server}'s {@code CLUSTER INFO} fields */
    static Map<String, String> info(RedisServer server) {
        try (Jedis jedis = server.admin(ADMIN_TIMEOUT_MILLIS)) {
            return parseInfo(jedis.clusterInfo());
        }
    }

    static Map<String, String> parseInfo(String text) {
        Map<String, String> map = new HashMap<>();
        for (String line : text.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                map.put(
                        line.substring(0, colon).trim(),
                        line.substring(colon + 1).trim());
            }
        }
        return map;
    }

    private String diagnostics() {
        StringBuilder out = new StringBuilder("Cluster nodes:\n");
        for (RedisServer server : servers) {
            out.append("* ").append(server).append('\n');
            if (server.isAlive() && !server.isPaused()) {
                try (Jedis jedis = server.admin(ADMIN_TIMEOUT_MILLIS)) {
                    Map<String, String> info = parseInfo(jedis.clusterInfo());
                    out.append("  cluster_state=")
                            .append(info.get("cluster_state"))
                            .append(" slots_ok=")
                            .append(info.get("cluster_slots_ok"))
                            .append(" known_nodes=")
                            .append(info.get("cluster_known_nodes"))
                            .append(" epoch=")
                            .append(info.get("cluster_current_epoch"))
                            .append('\n');
                    for (String line : jedis.clusterNodes().split("\n")) {
                        out.append("    ").append(line.strip()).append('\n');
                    }
                } catch (JedisException e) {
                    out.append("  (unreachable: ").append(e.getMessage()).append(")\n");
                }
            }
        }
        for (RedisServer server : servers) {
            out.append(server.logTail()).append('\n');
        }
        return out.toString();
    }

    private static List<RedisServer> reversed(List<RedisServer> servers) {
        List<RedisServer> copy = new ArrayList<>(servers);
        Collections.reverse(copy);
        return copy;
    }

    /** One line of {@code CLUSTER NODES}. */
    record ClusterNode(
            String id, HostAndPort address, Set<String> flags, String masterId, int slotCount, int firstSlot) {

        boolean isMaster() {
            return flags.contains("master");
        }

        boolean isReplica() {
            return flags.contains("slave") || flags.contains("replica");
        }

        /** Failing, suspected, or not yet fully joined. */
        boolean isFailing() {
            return flags.contains("fail")
                    || flags.contains("fail?")
                    || flags.contains("handshake")
                    || flags.contains("noaddr");
        }

        static List<ClusterNode> parseAll(String clusterNodes) {
            List<ClusterNode> nodes = new ArrayList<>();
            for (String line : clusterNodes.split("\n")) {
                if (!line.isBlank()) {
                    nodes.add(parse(line.strip()));
                }
            }
            return nodes;
        }

        /** {@code <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>...} */
        static ClusterNode parse(String line) {
            String[] f = line.split(" ");
            String endpoint = f[1];
            int cut = endpoint.indexOf('@');
            if (cut < 0) {
                cut = endpoint.indexOf(',');
            }
            String hostPort = cut < 0 ? endpoint : endpoint.substring(0, cut);
            int colon = hostPort.lastIndexOf(':');
            HostAndPort address =
                    new HostAndPort(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
            Set<String> flags = new LinkedHashSet<>(Arrays.asList(f[2].split(",")));
            String masterId = "-".equals(f[3]) ? null : f[3];
            int slots = 0;
            int first = Integer.MAX_VALUE;
            for (int i = 8; i < f.length; i++) {
                String range = f[i];
                if (range.startsWith("[")) {
                    continue; // slot being imported/migrated
                }
                int dash = range.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(range.substring(dash + 1));
                slots += to - from + 1;
                first = Math.min(first, from);
            }
            return new ClusterNode(f[0], address, Set.copyOf(flags), masterId, slots, first);
        }
    }
}
