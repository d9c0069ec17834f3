package io.github.ratelimit.testing.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import redis.clients.jedis.Jedis;

/**
 * Turns freshly started, cluster-enabled {@link RedisServer}s into one healthy Redis Cluster, with
 * plain commands only (no {@code redis-cli}).
 *
 * <p>Contract of {@link #form}: the first {@code masters} servers become the masters, each with an
 * even, contiguous share of the {@value RedisCluster#SLOTS} slots and a distinct config epoch; the
 * remaining servers become replicas, assigned to the masters round-robin. It returns only when every
 * node reports {@code cluster_state:ok} with all slots assigned, every node sees the planned
 * topology, and every replica's link to its master is up and its initial sync done; otherwise it
 * throws a {@link RedisHarnessException} with the given diagnostics. It never stops a server: that
 * is the caller's job on failure.
 */
final class ClusterFormation {

    private final List<RedisServer> servers;
    private final Duration timeout;
    private final Supplier<String> diagnostics;

    /**
     * @param servers every node, masters first; none is part of a cluster yet
     * @param timeout bound for each wait of the formation
     * @param diagnostics every node's view and log tail, for failure messages
     */
    ClusterFormation(List<RedisServer> servers, Duration timeout, Supplier<String> diagnostics) {
        this.servers = List.copyOf(servers);
        this.timeout = timeout;
        this.diagnostics = diagnostics;
    }

    /** Assigns slots, introduces the nodes, sets up the replicas and waits until the cluster is healthy. */
    void form(int masters, int replicasPerMaster) {
        int total = servers.size();
        List<String> masterIds = new ArrayList<>();
        for (int i = 0; i < masters; i++) {
            int from = (int) ((long) RedisCluster.SLOTS * i / masters);
            int to = (int) ((long) RedisCluster.SLOTS * (i + 1) / masters) - 1;
            try (Jedis jedis = servers.get(i).admin(RedisCluster.ADMIN_TIMEOUT_MILLIS)) {
                jedis.clusterAddSlots(IntStream.rangeClosed(from, to).toArray());
                jedis.clusterSetConfigEpoch(i + 1);
                masterIds.add(jedis.clusterMyId());
            }
        }
        try (Jedis first = servers.get(0).admin(RedisCluster.ADMIN_TIMEOUT_MILLIS)) {
            for (RedisServer other : servers.subList(1, total)) {
                first.clusterMeet(other.host(), other.port());
            }
        }
        Waits.until(
                timeout,
                "all " + total + " cluster nodes to know each other",
                () -> {
                    for (RedisServer server : servers) {
                        List<RedisCluster.ClusterNode> view = RedisCluster.view(server);
                        if (view.size() != total || view.stream().anyMatch(RedisCluster.ClusterNode::isFailing)) {
                            return false;
                        }
                    }
                    return true;
                },
                diagnostics);

        Map<String, String> plannedMasterOf = new HashMap<>();
        for (int r = 0; r < masters * replicasPerMaster; r++) {
            RedisServer replica = servers.get(masters + r);
            String masterId = masterIds.get(r % masters);
            Waits.until(
                    timeout,
                    replica + " to accept CLUSTER REPLICATE " + masterId,
                    () -> {
                        try (Jedis jedis = replica.admin(RedisCluster.ADMIN_TIMEOUT_MILLIS)) {
                            jedis.clusterReplicate(masterId);
                            return true;
                        }
                    },
                    diagnostics);
            try (Jedis jedis = replica.admin(RedisCluster.ADMIN_TIMEOUT_MILLIS)) {
                plannedMasterOf.put(jedis.clusterMyId(), masterId);
            }
        }

        Waits.until(
                timeout,
                "cluster formation: cluster_state:ok, all slots, planned roles seen by every node, replicas in sync",
                () -> isFormed(masters, plannedMasterOf),
                diagnostics);
    }

    private boolean isFormed(int masters, Map<String, String> plannedMasterOf) {
        for (RedisServer server : servers) {
            Map<String, String> info = RedisCluster.info(server);
            if (!"ok".equals(info.get("cluster_state"))
                    || !String.valueOf(RedisCluster.SLOTS).equals(info.get("cluster_slots_ok"))
                    || !String.valueOf(servers.size()).equals(info.get("cluster_known_nodes"))) {
                return false;
            }
            List<RedisCluster.ClusterNode> view = RedisCluster.view(server);
            long slotOwners = view.stream()
                    .filter(n -> n.isMaster() && n.slotCount() > 0 && !n.isFailing())
                    .count();
            if (slotOwners != masters) {
                return false;
            }
            for (Map.Entry<String, String> planned : plannedMasterOf.entrySet()) {
                boolean seen = view.stream()
                        .anyMatch(n -> n.id().equals(planned.getKey())
                                && n.isReplica()
                                && planned.getValue().equals(n.masterId())
                                && !n.isFailing());
                if (!seen) {
                    return false;
                }
            }
        }
        for (RedisServer replica : servers.subList(masters, servers.size())) {
            if (!isReplicaInSync(replica)) {
                return false;
            }
        }
        return true;
    }

    static boolean isReplicaInSync(RedisServer replica) {
        try (Jedis jedis = replica.admin(RedisCluster.ADMIN_TIMEOUT_MILLIS)) {
            Map<String, String> replication = RedisCluster.parseInfo(jedis.info("replication"));
            return "slave".equals(replication.get("role"))
                    && "up".equals(replication.get("master_link_status"))
                    && "0".equals(replication.get("master_sync_in_progress"));
        }
    }
}
