package io.github.ratelimit.testing.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClusterClient;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisClusterTest {

    private static RedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start(3, 1);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void formsAHealthyClusterOfThreeMastersWithOneReplicaEach() {
        assertThat(cluster.nodes()).hasSize(6).doesNotHaveDuplicates();
        List<HostAndPort> masters = cluster.masters();
        assertThat(masters).hasSize(3);
        for (HostAndPort master : masters) {
            assertThat(cluster.replicasOf(master)).hasSize(1).doesNotContainAnyElementsOf(masters);
        }
        for (HostAndPort node : cluster.nodes()) {
            try (Jedis jedis = new Jedis(node)) {
                assertThat(jedis.clusterInfo())
                        .contains("cluster_state:ok", "cluster_slots_ok:16384", "cluster_known_nodes:6");
            }
        }
    }

    @Test
    @Order(2)
    void clusterClientWritesAndReadsKeysOnEveryMaster() {
        try (RedisClusterClient client = RedisClusterClient.create(new HashSet<>(cluster.nodes()))) {
            for (int i = 0; i < 60; i++) {
                client.set("key:" + i, "value:" + i);
            }
            for (int i = 0; i < 60; i++) {
                assertThat(client.get("key:" + i)).isEqualTo("value:" + i);
            }
        }
        for (HostAndPort master : cluster.masters()) {
            try (Jedis jedis = new Jedis(master)) {
                assertThat(jedis.dbSize()).as("keys on %s", master).isPositive();
            }
        }
    }

    @Test
    @Order(3)
    void killingAMasterPromotesItsReplica() {
        HostAndPort master = cluster.masters().get(0);
        HostAndPort replica = cluster.replicasOf(master).get(0);

        HostAndPort killed = cluster.killMaster(0);
        assertThat(killed).isEqualTo(master);
        assertThat(cluster.server(killed).isAlive()).isFalse();

        List<HostAndPort> masters = cluster.awaitFailover();

        assertThat(masters).hasSize(3).doesNotContain(killed).contains(replica);
        try (RedisClusterClient client = RedisClusterClient.create(new HashSet<>(cluster.nodes()))) {
            for (int i = 0; i < 60; i++) {
                client.set("after:" + i, "v" + i);
                assertThat(client.get("after:" + i)).isEqualTo("v" + i);
            }
        }
    }
}
