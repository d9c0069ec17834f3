package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.internal.config.RedisSettings;
import io.github.ratelimit.redis.JedisBucketStore;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLParameters;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails.Node;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails.Sentinel;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails.Standalone;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.core.env.Environment;

/**
 * Builds the Redis store from Spring Boot's Redis connection when {@code ratelimit.redis.*} names no server, so an
 * application that already talks to Redis needs no second set of connection properties: from the
 * {@code DataRedisConnectionDetails} bean when the context has one ({@link ConnectionDetailsTarget}), else from the
 * {@code spring.data.redis.*} properties (host, port, url, database, username, password, ssl.enabled, sentinel,
 * cluster; an SSL bundle, which only the details carry, stops start-up). Loaded only when Jedis is present.
 */
final class JedisStores {

    private JedisStores() {}

    /**
     * @param client the client's settings from {@code ratelimit.redis.*} (key prefix, timeouts, pool size)
     * @param env where {@code spring.data.redis.*} names the server, and its timeout
     * @param connectionDetails Boot's {@code DataRedisConnectionDetails} bean, which names the server in place of the
     *        properties, or {@code null} when the context has none
     * @param clock replaces the Redis server's clock, or {@code null}
     * @return the store
     */
    static JedisBucketStore fromSpringBoot(
            RedisSettings client, Environment env, @Nullable Object connectionDetails, @Nullable TimeMeter clock) {
        JedisBucketStore.Builder b = JedisBucketStore.builder()
                .keyPrefix(client.keyPrefix())
                .commandTimeout(client.commandTimeout())
                .connectTimeout(client.connectTimeout())
                .poolSize(client.poolSize())
                .autoPipelining(client.autoPipelining())
                .migrateKeys(client.migrateKeys())
                .backgroundTimeout(client.backgroundTimeout());
        if (clock != null) {
            b.timeMeter(clock);
        }
        if (connectionDetails != null) {
            ConnectionDetailsTarget.pointAt(b, connectionDetails, urlUsesSsl(env), env);
        } else {
            fromSpringDataRedis(b, env);
        }
        return b.build();
    }

    private static void fromSpringDataRedis(JedisBucketStore.Builder b, Environment env) {
        String bundle = env.getProperty("spring.data.redis.ssl.bundle");
        if (bundle != null && !bundle.isBlank()) {
            // Without it, TLS would trust only the JVM's default certificates: refused at start-up, not at each call.
            throw new InvalidRateLimitConfigurationException(
                    "spring.data.redis.ssl.bundle",
                    bundle,
                    "SSL bundle '" + bundle
                            + "' reaches the rate-limit store only through Spring Boot's Redis connection details, which "
                            + "spring-boot-data-redis (Spring Data Redis's auto-configuration) provides",
                    "Add "
                            + "org.springframework.boot:spring-boot-data-redis and leave its auto-configuration on, or name "
                            + "the server in ratelimit.redis.url.");
        }
        Binder binder = Binder.get(env);
        String user = env.getProperty("spring.data.redis.username");
        String password = env.getProperty("spring.data.redis.password");
        boolean ssl = env.getProperty("spring.data.redis.ssl.enabled", Boolean.class, false);
        String master = env.getProperty("spring.data.redis.sentinel.master");
        List<String> cluster = binder.bind("spring.data.redis.cluster.nodes", Bindable.listOf(String.class))
                .orElse(List.of());
        String url = env.getProperty("spring.data.redis.url");
        if (master != null) {
            List<String> nodes = binder.bind("spring.data.redis.sentinel.nodes", Bindable.listOf(String.class))
                    .orElse(List.of());
            b.sentinel(master, nodes(nodes, "spring.data.redis.sentinel.nodes"));
            replicated(b, user, password, ssl, env);
        } else if (!cluster.isEmpty()) {
            b.cluster(cluster);
            replicated(b, user, password, ssl, env);
        } else if (url != null) {
            // ssl.enabled makes TLS of a redis:// URL too, as Boot's own clients do.
            b.url(ssl ? url.trim().replaceFirst("(?i)^redis://", "rediss://") : url);
        } else {
            standalone(
                    b,
                    env.getProperty("spring.data.redis.host", "localhost"),
                    env.getProperty("spring.data.redis.port", Integer.class, 6379),
                    env.getProperty("spring.data.redis.database", Integer.class, 0),
                    user,
                    password,
                    ssl);
        }
    }

    /**
     * Points the builder at one server, with a URL.
     *
     * @param b the builder
     * @param host the server's host (an IPv6 address with or without brackets)
     * @param port its port
     * @param database the database
     * @param user the ACL user, or {@code null} for the default one
     * @param password the password, or {@code null} for none
     * @param ssl whether the connection uses TLS
     */
    static void standalone(
            JedisBucketStore.Builder b,
            String host,
            int port,
            int database,
            @Nullable String user,
            @Nullable String password,
            boolean ssl) {
        String auth = password == null ? "" : (user == null ? "" : encode(user)) + ":" + encode(password) + "@";
        String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        b.url((ssl ? "rediss://" : "redis://") + auth + h + ":" + port + "/" + database);
    }

    /**
     * What Sentinel and Cluster connections take beside their nodes: credentials, TLS, and
     * {@code spring.data.redis.timeout} as the command timeout when it is shorter than a second.
     *
     * @param b the builder, given Sentinel or Cluster nodes
     * @param user the ACL user, or {@code null}
     * @param password the password, or {@code null}
     * @param ssl whether connections use TLS
     * @param env where {@code spring.data.redis.timeout} is read
     */
    static void replicated(
            JedisBucketStore.Builder b,
            @Nullable String user,
            @Nullable String password,
            boolean ssl,
            Environment env) {
        if (user != null || password != null) {
            b.credentials(user, password);
        }
        Duration timeout = env.getProperty("spring.data.redis.timeout", Duration.class);
        if (timeout != null && timeout.compareTo(Duration.ofSeconds(1)) < 0 && !timeout.isZero()) {
            b.commandTimeout(timeout);
        }
        b.ssl(ssl);
    }

    /**
     * @param env the environment
     * @return whether {@code spring.data.redis.url} asks for TLS ({@code rediss://}), which Spring Boot applies to its
     *         own connections whatever the connection details say
     */
    private static boolean urlUsesSsl(Environment env) {
        String url = env.getProperty("spring.data.redis.url");
        return url != null && url.trim().toLowerCase(Locale.ROOT).startsWith("rediss:");
    }

    /** Percent-encodes a URL's user or password: a space as {@code %20}, which Jedis decodes, not as {@code +}. */
    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * @param nodes the sentinels, as {@code host:port}
     * @param property where they were read, for the message
     * @return the nodes
     * @throws InvalidRateLimitConfigurationException when there are none
     */
    static List<String> nodes(List<String> nodes, String property) {
        if (nodes.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(
                    property + " is empty. List the sentinels as host:port, " + "e.g. 'sentinel-1:26379'.");
        }
        return nodes;
    }

    /**
     * Points a store's builder at the server Spring Boot's {@link DataRedisConnectionDetails} names, as Boot's own
     * Jedis connection factory reads them: Sentinel first, then Cluster, else the standalone server (its database
     * too); the user and password; TLS through the details' SSL bundle. The details are Boot's own, made from
     * {@code spring.data.redis.*}, or the application's, Testcontainers' {@code @ServiceConnection}'s or Docker
     * Compose's. A class of its own, loaded only when {@code spring-boot-data-redis} is present.
     */
    private static final class ConnectionDetailsTarget {

        /**
         * @param b the builder
         * @param connectionDetails a {@link DataRedisConnectionDetails}
         * @param urlUsesSsl whether {@code spring.data.redis.url} asks for TLS, which Boot applies beside the details
         * @param env where {@code spring.data.redis.timeout} is read
         * @throws InvalidRateLimitConfigurationException when the details name a master and replicas (no Sentinel),
         *         which the store cannot use, or a Sentinel master without sentinels
         */
        static void pointAt(JedisBucketStore.Builder b, Object connectionDetails, boolean urlUsesSsl, Environment env) {
            DataRedisConnectionDetails details = (DataRedisConnectionDetails) connectionDetails;
            SslBundle bundle = details.getSslBundle();
            if (bundle != null) {
                b.ssl(bundle.createSslContext().getSocketFactory(), parameters(bundle.getOptions()));
            }
            boolean ssl = bundle != null || urlUsesSsl;
            Sentinel sentinel = details.getSentinel();
            if (sentinel != null) {
                b.sentinel(
                        sentinel.getMaster(),
                        nodes(hostsAndPorts(sentinel.getNodes()), source(details, "sentinel.nodes")));
                replicated(b, details.getUsername(), details.getPassword(), ssl, env);
            } else if (details.getCluster() != null) {
                b.cluster(hostsAndPorts(details.getCluster().getNodes()));
                replicated(b, details.getUsername(), details.getPassword(), ssl, env);
            } else if (details.getMasterReplica() != null) {
                throw new InvalidRateLimitConfigurationException(
                        source(details, "masterreplica.nodes"),
                        null,
                        "the rate-limit store cannot use a master and replicas without Sentinel: it writes every "
                                + "decision, and only to one master it finds through Sentinel or Cluster",
                        "Set ratelimit.redis.url to the master, e.g. ratelimit.redis.url=redis://master:6379, or use "
                                + "Sentinel.");
            } else {
                Standalone server = details.getStandalone();
                if (server == null) {
                    throw new InvalidRateLimitConfigurationException(
                            source(details, "host"),
                            null,
                            "the Redis connection details name no server: no standalone server, Sentinel or Cluster",
                            "Set spring.data.redis.host, or ratelimit.redis.url, e.g. redis://localhost:6379.");
                }
                // A URL without a port: Redis's own.
                int port = server.getPort() > 0 ? server.getPort() : 6379;
                standalone(
                        b,
                        server.getHost(),
                        port,
                        server.getDatabase(),
                        details.getUsername(),
                        details.getPassword(),
                        ssl);
            }
        }

        /** @return what names the setting: the property, for Boot's own details, or the details' class */
        private static String source(DataRedisConnectionDetails details, String property) {
            String type = details.getClass().getName();
            return type.equals(RateLimitAutoConfiguration.PROPERTIES_CONNECTION_DETAILS)
                    ? "spring.data.redis." + property
                    : "DataRedisConnectionDetails (" + type + ")";
        }

        private static List<String> hostsAndPorts(List<Node> nodes) {
            return nodes.stream().map(n -> n.host() + ":" + n.port()).toList();
        }

        /** @return the bundle's protocols and cipher suites, or {@code null} when it names none */
        private static @Nullable SSLParameters parameters(@Nullable SslOptions options) {
            if (options == null || !options.isSpecified()) {
                return null;
            }
            SSLParameters parameters = new SSLParameters();
            if (options.getCiphers() != null) {
                parameters.setCipherSuites(options.getCiphers());
            }
            if (options.getEnabledProtocols() != null) {
                parameters.setProtocols(options.getEnabledProtocols());
            }
            return parameters;
        }
    }
}
