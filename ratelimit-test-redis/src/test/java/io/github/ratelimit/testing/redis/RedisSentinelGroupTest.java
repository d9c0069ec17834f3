package io.github.ratelimit.testing.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisSentinelClient;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisSentinelGroupTest {

    private static RedisSentinelGroup group;

    @BeforeAll
    static void startGroup() {
        group = RedisSentinelGroup.start();
    }

    @AfterAll
    static void stopGroup() {
        if (group != null) {
            group.close();
        }
    }

    @Test
    @Order(1)
    void sentinelsResolveTheMasterForAClient() {
        assertThat(group.masterName()).isEqualTo("mymaster");
        assertThat(group.sentinels()).hasSize(3);
        assertThat(group.master()).isEqualTo(group.dataNodes().get(0));

        try (RedisSentinelClient client = sentinelClient()) {
            assertThat(client.getCurrentMaster()).isEqualTo(group.master());
            client.set("k", "v");
            assertThat(client.get("k")).isEqualTo("v");
        }
    }

    @Test
    @Order(2)
    void killingTheMasterPromotesTheReplica() {
        HostAndPort oldMaster = group.master();
        HostAndPort replica = group.dataNodes().get(1);

        assertThat(group.killMaster()).isEqualTo(oldMaster);
        HostAndPort newMaster = group.awaitFailover();

        assertThat(newMaster).isNotEqualTo(oldMaster).isEqualTo(replica);
        try (Jedis jedis = new Jedis(newMaster)) {
            assertThat(jedis.info("replication")).contains("role:master");
        }
        try (RedisSentinelClient client = sentinelClient()) {
            assertThat(client.getCurrentMaster()).isEqualTo(newMaster);
            client.set("after", "failover");
            assertThat(client.get("after")).isEqualTo("failover");
        }
    }

    private static RedisSentinelClient sentinelClient() {
        return RedisSentinelClient.builder()
                .masterName(group.masterName())
                .sentinels(group.sentinels())
                .build();
    }
}
