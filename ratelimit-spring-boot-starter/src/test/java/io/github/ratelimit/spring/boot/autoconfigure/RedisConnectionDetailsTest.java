package io.github.ratelimit.spring.boot.autoconfigure;

import static io.github.ratelimit.spring.boot.StartupFailures.configError;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.spring.boot.StarterAutoConfigurations;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.redis.RedisCluster;
import io.github.ratelimit.testing.redis.RedisSentinelGroup;
import io.github.ratelimit.testing.redis.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails.Node;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * The Redis store takes its server from Spring Boot's {@link DataRedisConnectionDetails} (what Testcontainers'
 * {@code @ServiceConnection} and Docker Compose define, or an application itself) when {@code ratelimit.redis.*}
 * names none: with Spring Data Redis's own auto-configuration, against real servers, and no
 * {@code spring.data.redis.*} property anywhere.
 */
class RedisConnectionDetailsTest {

    private static RedisServer plain;
    private static RedisServer withUser;
    private static RedisServer withPassword;
    /** A server that answers TLS on {@link #tlsPort} with a self-signed certificate (test resources, redis-tls). */
    private static RedisServer withTls;

    private static int tlsPort;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of(DataRedisAutoConfiguration.class));

    /** An application without spring-boot-data-redis: no connection details, only the properties. */
    private final ApplicationContextRunner withoutBootDataRedis = new ApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of())
            .withClassLoader(new FilteredClassLoader("org.springframework.boot.data.redis"));

    @BeforeAll
    static void startServers() {
        plain = RedisServer.start();
        withUser = RedisServer.builder().user("limiter", "s3cret:/@").start();
        withPassword = RedisServer.builder().password("only-a-password").start();
        tlsPort = freePort();
        String certificate = resource("redis-tls/server.crt");
        withTls = RedisServer.builder()
                .config(
                        "tls-port " + tlsPort,
                        "tls-cert-file " + certificate,
                        "tls-key-file " + resource("redis-tls/server.key"),
                        "tls-ca-cert-file " + certificate,
                        "tls-auth-clients no")
                .start();
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String resource(String name) {
        try {
            return Path.of(RedisConnectionDetailsTest.class
                            .getClassLoader()
                            .getResource(name)
                            .toURI())
                    .toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @AfterAll
    static void stopServers() {
        for (RedisServer server : new RedisServer[] {plain, withUser, withPassword, withTls}) {
            if (server != null) {
                server.close();
            }
        }
    }

    /** Connection details as an application or a service connection defines them: a server, perhaps credentials. */
    private record Details(
            Standalone standalone,
            String username,
            String password,
            Sentinel sentinel,
            Cluster cluster,
            MasterReplica masterReplica)
            implements DataRedisConnectionDetails {

        static Details of(RedisServer server, int database, String username, String password) {
            return new Details(
                    Standalone.of(server.host(), server.port(), database), username, password, null, null, null);
        }

        @Override
        public Standalone getStandalone() {
            return standalone;
        }

        @Override
        public String getUsername() {
            return username;
        }

        @Override
        public String getPassword() {
            return password;
        }

        @Override
        public Sentinel getSentinel() {
            return sentinel;
        }

        @Override
        public Cluster getCluster() {
            return cluster;
        }

        @Override
        public MasterReplica getMasterReplica() {
            return masterReplica;
        }
    }

    private static Decision acquire(RateLimiter limiter, String rule) {
        return limiter.guard(Rule.builder(rule).limits("1/1h").build()).acquire(RequestContext.empty());
    }

    private static Jedis jedis(RedisServer server, int database) {
        Jedis jedis = new Jedis(server.host(), server.port());
        jedis.select(database);
        return jedis;
    }

    @Test
    void limitsOnTheRedisOfAConnectionDetailsBeanAloneAndSharesItWithAnotherInstance() {
        try (Jedis redis = jedis(plain, 3)) {
            redis.flushDB();
            ApplicationContextRunner app =
                    runner.withBean(DataRedisConnectionDetails.class, () -> Details.of(plain, 3, null, null));
            app.run(first -> {
                assertThat(first.getBean(BucketStore.class)).isInstanceOf(JedisBucketStore.class);
                assertThat(acquire(first.getBean(RateLimiter.class), "shared").permitted())
                        .isTrue();
                assertThat(redis.keys("ratelimit:*"))
                        .as("the bucket is in the details' database 3")
                        .anyMatch(key -> key.contains("shared"));
                app.run(second -> assertThat(acquire(second.getBean(RateLimiter.class), "shared")
                                .permitted())
                        .as("a second instance on the same Redis shares the limit")
                        .isFalse());
            });
        }
    }

    @Test
    void authenticatesAsTheDetailsUserOrWithTheirPasswordAlone() {
        // A password with a space: a URL's user info must carry it as %20, which Jedis decodes, not as '+'.
        try (Jedis admin = new Jedis(withUser.host(), withUser.port())) {
            admin.auth("limiter", "s3cret:/@");
            admin.aclSetUser("spaced", "on", ">pass word+", "~*", "&*", "+@all");
        }
        for (Details details : List.of(
                Details.of(withUser, 0, "limiter", "s3cret:/@"),
                Details.of(withUser, 1, "spaced", "pass word+"),
                Details.of(withPassword, 0, null, "only-a-password"))) {
            runner.withBean(DataRedisConnectionDetails.class, () -> details).run(context -> {
                RateLimiter limiter = context.getBean(RateLimiter.class);
                Decision first = acquire(limiter, "authenticated");
                assertThat(first.binding().basis())
                        .as("decided in Redis, not by a failure policy")
                        .isEqualTo(Decision.Basis.BUCKET);
                assertThat(first.permitted()).isTrue();
                assertThat(acquire(limiter, "authenticated").permitted()).isFalse();
                assertThat(((JedisBucketStore) context.getBean(BucketStore.class))
                                .client()
                                .keys("ratelimit:*"))
                        .anyMatch(key -> key.contains("authenticated"));
            });
        }
    }

    @Test
    void ratelimitRedisPropertiesWinOverTheConnectionDetails() {
        try (Jedis redis = jedis(plain, 4)) {
            redis.flushDB();
            RedisServer nowhere = withPassword;
            runner.withBean(DataRedisConnectionDetails.class, () -> Details.of(nowhere, 0, null, "wrong"))
                    .withPropertyValues("ratelimit.redis.url=" + plain.uri() + "/4")
                    .run(context -> {
                        assertThat(acquire(context.getBean(RateLimiter.class), "ours")
                                        .binding()
                                        .basis())
                                .isEqualTo(Decision.Basis.BUCKET);
                        assertThat(redis.keys("ratelimit:*")).anyMatch(key -> key.contains("ours"));
                    });
        }
    }

    @Test
    void staysLocalWithSpringDataRedisButNoServerNamedAnywhere() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(DataRedisConnectionDetails.class);
            assertThat(context.getBean(BucketStore.class)).isInstanceOf(LocalBucketStore.class);
        });
        runner.withBean(DataRedisConnectionDetails.class, () -> Details.of(plain, 0, null, null))
                .withPropertyValues("ratelimit.store=local")
                .run(context -> assertThat(context.getBean(BucketStore.class)).isInstanceOf(LocalBucketStore.class));
    }

    @Test
    void readsSpringDataRedisPropertiesThroughBootsConnectionDetails() {
        try (Jedis redis = jedis(plain, 5)) {
            redis.flushDB();
            runner.withPropertyValues(
                            "spring.data.redis.host=" + plain.host(),
                            "spring.data.redis.port=" + plain.port(),
                            "spring.data.redis.database=5")
                    .run(context -> {
                        assertThat(acquire(context.getBean(RateLimiter.class), "boot-props")
                                        .permitted())
                                .isTrue();
                        assertThat(redis.keys("ratelimit:*")).anyMatch(key -> key.contains("boot-props"));
                    });
        }
    }

    @Test
    void readsSpringDataRedisPropertiesWithoutSpringBootDataRedis() {
        try (Jedis redis = jedis(plain, 6)) {
            redis.flushDB();
            withoutBootDataRedis
                    .withPropertyValues("spring.data.redis.url=" + plain.uri() + "/6")
                    .run(context -> {
                        assertThat(acquire(context.getBean(RateLimiter.class), "no-boot-redis")
                                        .permitted())
                                .isTrue();
                        assertThat(redis.keys("ratelimit:*")).anyMatch(key -> key.contains("no-boot-redis"));
                    });
        }
    }

    /** spring.data.redis.ssl.enabled with a redis:// URL: TLS, which a plain server cannot answer, never plain text. */
    @Test
    void neverFallsBackToPlainTextWhenSslIsEnabled() {
        try (Jedis redis = jedis(plain, 8)) {
            redis.flushDB();
            for (ApplicationContextRunner app : List.of(runner, withoutBootDataRedis)) {
                app.withPropertyValues(
                                "spring.data.redis.url=" + plain.uri() + "/8",
                                "spring.data.redis.ssl.enabled=true",
                                "ratelimit.redis.connect-timeout=100ms")
                        .run(context -> assertThat(acquire(context.getBean(RateLimiter.class), "plain")
                                        .binding()
                                        .basis())
                                .isNotEqualTo(Decision.Basis.BUCKET));
            }
            assertThat(redis.keys("ratelimit:*")).isEmpty();
        }
    }

    @Test
    void refusesAnSslBundleItCannotReadWithoutSpringBootDataRedis() {
        withoutBootDataRedis
                .withPropertyValues(
                        "spring.data.redis.host=" + withTls.host(),
                        "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.enabled=true",
                        "spring.data.redis.ssl.bundle=redis")
                .run(context -> assertThat(configError(context))
                        .hasMessage("spring.data.redis.ssl.bundle: SSL "
                                + "bundle 'redis' reaches the rate-limit store only through Spring Boot's Redis connection "
                                + "details, which spring-boot-data-redis (Spring Data Redis's auto-configuration) provides. "
                                + "Add org.springframework.boot:spring-boot-data-redis and leave its auto-configuration on, "
                                + "or name the server in ratelimit.redis.url."));
    }

    @Test
    void followsTheSentinelsOfTheDetails() {
        try (RedisSentinelGroup group =
                RedisSentinelGroup.builder().replicas(0).sentinels(1, 1).start()) {
            List<Node> sentinels = group.sentinels().stream()
                    .map(s -> new Node(s.getHost(), s.getPort()))
                    .toList();
            DataRedisConnectionDetails.Sentinel sentinel = new DataRedisConnectionDetails.Sentinel() {
                @Override
                public int getDatabase() {
                    return 0;
                }

                @Override
                public String getMaster() {
                    return group.masterName();
                }

                @Override
                public List<Node> getNodes() {
                    return sentinels;
                }

                @Override
                public String getUsername() {
                    return null;
                }

                @Override
                public String getPassword() {
                    return null;
                }
            };
            runner.withBean(DataRedisConnectionDetails.class, () -> new Details(null, null, null, sentinel, null, null))
                    .run(context -> {
                        assertThat(acquire(context.getBean(RateLimiter.class), "sentinel")
                                        .permitted())
                                .isTrue();
                        HostAndPort master = group.master();
                        try (Jedis redis = new Jedis(master.getHost(), master.getPort())) {
                            assertThat(redis.keys("ratelimit:*")).anyMatch(key -> key.contains("sentinel"));
                        }
                    });
        }
    }

    @Test
    void spreadsOverTheClusterOfTheDetails() {
        try (RedisCluster cluster = RedisCluster.start(3, 0)) {
            List<Node> nodes = cluster.nodes().stream()
                    .map(n -> new Node(n.getHost(), n.getPort()))
                    .toList();
            DataRedisConnectionDetails.Cluster details = () -> nodes;
            runner.withBean(DataRedisConnectionDetails.class, () -> new Details(null, null, null, null, details, null))
                    .run(context -> {
                        RateLimiter limiter = context.getBean(RateLimiter.class);
                        assertThat(acquire(limiter, "clustered").permitted()).isTrue();
                        assertThat(acquire(limiter, "clustered").permitted()).isFalse();
                        List<String> keys = new ArrayList<>();
                        for (HostAndPort master : cluster.masters()) {
                            try (Jedis redis = new Jedis(master.getHost(), master.getPort())) {
                                keys.addAll(redis.keys("ratelimit:*"));
                            }
                        }
                        assertThat(keys).as("the bucket is in the cluster").anyMatch(key -> key.contains("clustered"));
                    });
        }
    }

    /**
     * Boot's {@code spring.data.redis.ssl.bundle} reaches the store through the connection details: the store trusts
     * the bundle's certificate, which the JVM's default trust store does not hold.
     */
    @Test
    void speaksTlsWithTheSslBundleOfTheConnectionDetails() {
        try (Jedis redis = jedis(withTls, 7)) {
            redis.flushDB();
            ApplicationContextRunner tls = runner.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
                    .withPropertyValues(
                            "spring.data.redis.host=" + withTls.host(),
                            "spring.data.redis.port=" + tlsPort,
                            "spring.data.redis.database=7",
                            "spring.data.redis.ssl.enabled=true");
            tls.withPropertyValues(
                            "spring.data.redis.ssl.bundle=redis",
                            "spring.ssl.bundle.pem.redis.truststore.certificate=classpath:redis-tls/server.crt")
                    .run(context -> {
                        assertThat(acquire(context.getBean(RateLimiter.class), "tls")
                                        .binding()
                                        .basis())
                                .isEqualTo(Decision.Basis.BUCKET);
                        assertThat(redis.keys("ratelimit:*")).anyMatch(key -> key.contains("tls"));
                    });
            tls.run(context -> assertThat(acquire(context.getBean(RateLimiter.class), "untrusted")
                            .binding()
                            .basis())
                    .as("TLS with the JVM's own trust store, which does not trust the server: no decision in Redis")
                    .isNotEqualTo(Decision.Basis.BUCKET));
            assertThat(redis.keys("ratelimit:*")).noneMatch(key -> key.contains("untrusted"));
        }
    }

    @Test
    void refusesAMasterAndReplicasWithoutSentinel() {
        DataRedisConnectionDetails.MasterReplica replicas = () -> List.of(new Node("127.0.0.1", 6379));
        runner.withBean(DataRedisConnectionDetails.class, () -> new Details(null, null, null, null, null, replicas))
                .run(context -> assertThat(configError(context))
                        .hasMessageStartingWith("DataRedisConnectionDetails ("
                                + Details.class.getName()
                                + "): the rate-limit store cannot use a master and replicas without "
                                + "Sentinel"));
        runner.withPropertyValues(
                        "spring.data.redis.masterreplica.nodes=127.0.0.1:6379", "spring.data.redis.host=127.0.0.1")
                .run(context -> assertThat(configError(context))
                        .hasMessage(
                                "spring.data.redis.masterreplica.nodes: the rate-limit store cannot use a master and "
                                        + "replicas without Sentinel: it writes every decision, and only to one master it finds "
                                        + "through Sentinel or Cluster. Set ratelimit.redis.url to the master, e.g. "
                                        + "ratelimit.redis.url=redis://master:6379, or use Sentinel."));
    }
}
