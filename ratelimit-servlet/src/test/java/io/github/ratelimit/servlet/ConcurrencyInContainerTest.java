package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.servlet.testing.ContainerLog;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.RedisClient;

/**
 * Concurrency rules ({@code ratelimit.rules[i].concurrency=2}, no windows) through the {@code web.xml} filter in a
 * real Tomcat, on the local store and on a real Redis: at most two requests per client address are in flight at once,
 * each holding its slot from the filter's decision until its response is over. HARD answers the others 429 with
 * {@code Retry-After: 1} and headers that count calls in flight; a request whose servlet throws (500) and an
 * asynchronous request (once another thread completes it, not when its servlet returns) give their slots back; SOFT
 * makes a request wait for a slot up to its {@code max-delay}, and answers 429 (never reaching the servlet) when none
 * is freed in time. A rule with both {@code concurrency} and {@code limits} fails deployment, naming the rule. On
 * Redis the slots are the leases in {@code <prefix>:<rule>:{<key>}:slots}, none left once every request is over.
 * Every wait here waits for an event (a request entering the servlet, a response), never for a time.
 */
class ConcurrencyInContainerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final String POLICY = "\"slow-concurrency\";q=2;qu=\"concurrent-requests\"";

    /**
     * Under {@code /slow/}, {@code /soft/} and {@code /brief/}: {@code block} waits for the test's release,
     * {@code throw} throws, {@code async} starts async processing that the test completes later,
     * {@code quick} answers at once.
     */
    public static final class Slow extends HttpServlet {
        static final AtomicInteger ENTERED = new AtomicInteger();
        static final Semaphore RELEASE = new Semaphore(0);
        static final ConcurrentLinkedQueue<AsyncContext> PENDING = new ConcurrentLinkedQueue<>();

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            req.setAttribute(Slow.class.getName(), true);
            String what = req.getRequestURI().substring(req.getRequestURI().lastIndexOf('/') + 1);
            ENTERED.incrementAndGet();
            switch (what) {
                case "async" -> {
                    AsyncContext async = req.startAsync();
                    async.setTimeout(30_000);
                    PENDING.add(async);
                }
                case "quick" -> resp.getWriter().write("quick");
                case "throw" -> throw new IllegalStateException("the handler failed");
                default -> {
                    try {
                        // Bounded, so a failed test leaves no container thread behind.
                        if (!RELEASE.tryAcquire(30, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("never released");
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                    resp.getWriter().write("done");
                }
            }
        }
    }

    /**
     * Runs before the rate-limit filter and counts the requests it parked: back from the chain in async mode without
     * reaching the servlet, that is waiting for a SOFT slot.
     */
    public static final class Parked implements Filter {
        static final AtomicInteger PARKED = new AtomicInteger();

        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            chain.doFilter(req, res);
            if (req.isAsyncStarted() && req.getAttribute(Slow.class.getName()) == null) {
                PARKED.incrementAndGet();
            }
        }
    }

    private final ExecutorService clients = Executors.newCachedThreadPool();
    private final String prefix = "concurrency-" + System.nanoTime();
    private TomcatServer server;

    @BeforeEach
    void reset() {
        Slow.ENTERED.set(0);
        Slow.RELEASE.drainPermits();
        Slow.PENDING.clear();
        Parked.PARKED.set(0);
    }

    @AfterEach
    void stop() throws Exception {
        // Whatever a failed test left waiting ends now, so Tomcat stops at once.
        Slow.RELEASE.release(1_000);
        for (AsyncContext async; (async = Slow.PENDING.poll()) != null; ) {
            async.complete();
        }
        clients.shutdownNow();
        if (server != null) {
            server.close();
        }
    }

    private TomcatServer start(Path dir, String store, String... extra) throws Exception {
        return start(dir, store, false, extra);
    }

    /** @param async whether the filter is mapped to {@code ASYNC} dispatches besides {@code REQUEST} */
    private TomcatServer start(Path dir, String store, boolean async, String... extra) throws Exception {
        List<String> lines = new ArrayList<>(List.of(
                "ratelimit.rules[0].name=slow",
                "ratelimit.rules[0].paths=/slow/**",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].concurrency=2",
                "ratelimit.rules[1].name=soft",
                "ratelimit.rules[1].paths=/soft/**",
                "ratelimit.rules[1].key=ip",
                "ratelimit.rules[1].concurrency=2",
                "ratelimit.rules[1].mode=soft",
                "ratelimit.rules[1].max-delay=5s",
                "ratelimit.rules[2].name=brief",
                "ratelimit.rules[2].paths=/brief/**",
                "ratelimit.rules[2].key=ip",
                "ratelimit.rules[2].concurrency=1",
                "ratelimit.rules[2].mode=soft",
                "ratelimit.rules[2].max-delay=200ms"));
        lines.addAll(List.of(extra));
        if (store.equals("redis")) {
            lines.add("ratelimit.redis.url=" + redis.uri());
            lines.add("ratelimit.redis.key-prefix=" + prefix);
        }
        Path rules = Files.writeString(dir.resolve("ratelimit.properties"), String.join("\n", lines));
        server = TomcatServer.builder()
                .filterBefore("parked", new Parked())
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .servletClass("slow", Slow.class.getName(), true, "/*")
                .context(context -> {
                    if (async) {
                        FilterMap map = Arrays.stream(context.findFilterMaps())
                                .filter(m -> m.getFilterName().equals("rateLimit"))
                                .findFirst()
                                .orElseThrow();
                        map.setDispatcher(DispatcherType.REQUEST.name());
                        map.setDispatcher(DispatcherType.ASYNC.name());
                    }
                })
                .start();
        return server;
    }

    private CompletableFuture<RawHttp.Response> send(String path) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return RawHttp.send(server.port(), "GET", path);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                },
                clients);
    }

    private RawHttp.Response get(String path) throws IOException {
        return RawHttp.send(server.port(), "GET", path);
    }

    /** On Redis: the leases the rule's key holds, one per request in flight. */
    private void assertLeases(String store, String rule, int inFlight) {
        if (store.equals("redis")) {
            byte[] key = (prefix + ":" + rule + ":{127.0.0.1}:slots").getBytes(StandardCharsets.UTF_8);
            try (RedisClient client = RedisClient.builder()
                    .hostAndPort(redis.server().hostAndPort())
                    .build()) {
                assertThat(client.zcard(key)).as("leases of %s in Redis", rule).isEqualTo(inFlight);
            }
        }
    }

    private static void assertRejected(RawHttp.Response response) {
        assertThat(response.status()).isEqualTo(429);
        assertThat(response.header("Retry-After"))
                .as("nothing says when a call ends: a second")
                .isEqualTo("1");
        assertThat(response.header("RateLimit-Policy")).isEqualTo(POLICY);
        assertThat(response.header("RateLimit")).isEqualTo("\"slow-concurrency\";r=0");
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void twoRequestsAreInFlightAtOnceAndTheOthersGet429(String store, @TempDir Path dir) throws Exception {
        start(dir, store);
        List<CompletableFuture<RawHttp.Response>> six = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            six.add(send("/slow/block"));
        }
        await().until(() -> six.stream().filter(CompletableFuture::isDone).count() == 4 && Slow.ENTERED.get() == 2);
        assertThat(Slow.ENTERED.get()).as("requests in the servlet").isEqualTo(2);
        six.stream().filter(CompletableFuture::isDone).forEach(f -> assertRejected(f.join()));
        assertLeases(store, "slow", 2);

        Slow.RELEASE.release(2);
        List<RawHttp.Response> all = six.stream().map(CompletableFuture::join).toList();
        Map<Integer, Long> statuses =
                all.stream().collect(Collectors.groupingBy(RawHttp.Response::status, Collectors.counting()));
        assertThat(statuses).isEqualTo(Map.of(200, 2L, 429, 4L));
        assertThat(all.stream().filter(r -> r.status() == 200).map(r -> r.header("RateLimit")))
                .as("the free slots each left")
                .containsExactlyInAnyOrder("\"slow-concurrency\";r=1", "\"slow-concurrency\";r=0");
        assertThat(all.stream().filter(r -> r.status() == 200).map(r -> r.header("RateLimit-Policy")))
                .containsOnly(POLICY);
        assertLeases(store, "slow", 0);

        // Both slots came back: two requests are in flight again, and a third is refused again.
        assertThat(get("/slow/quick").status()).isEqualTo(200);
        List<CompletableFuture<RawHttp.Response>> again = List.of(send("/slow/block"), send("/slow/block"));
        await().until(() -> Slow.ENTERED.get() == 5);
        assertRejected(get("/slow/quick"));
        Slow.RELEASE.release(2);
        assertThat(again).allSatisfy(f -> assertThat(f.join().status()).isEqualTo(200));
        assertLeases(store, "slow", 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aRequestWhoseServletThrowsGivesItsSlotBack(String store, @TempDir Path dir) throws Exception {
        start(dir, store);
        CompletableFuture<RawHttp.Response> holding = send("/slow/block");
        await().until(() -> Slow.ENTERED.get() == 1);
        for (int i = 0; i < 3; i++) {
            RawHttp.Response failed = get("/slow/throw");
            assertThat(failed.status())
                    .as("failure %d, in the one slot left", i)
                    .isEqualTo(500);
            assertThat(failed.header("RateLimit")).isEqualTo("\"slow-concurrency\";r=0");
        }
        assertThat(holding).isNotDone();
        assertLeases(store, "slow", 1);

        CompletableFuture<RawHttp.Response> second = send("/slow/block");
        await().until(() -> Slow.ENTERED.get() == 5);
        assertRejected(get("/slow/quick"));
        Slow.RELEASE.release(2);
        assertThat(holding.join().status()).isEqualTo(200);
        assertThat(second.join().status()).isEqualTo(200);
        assertLeases(store, "slow", 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void anAsyncRequestHoldsItsSlotUntilItCompletes(String store, @TempDir Path dir) throws Exception {
        start(dir, store);
        CompletableFuture<RawHttp.Response> first = send("/slow/async");
        CompletableFuture<RawHttp.Response> second = send("/slow/async");
        await().until(() -> Slow.PENDING.size() == 2);
        assertRejected(get("/slow/quick"));
        assertThat(first).as("its servlet returned; the request goes on").isNotDone();
        assertLeases(store, "slow", 2);

        CompletableFuture<Void> completing = CompletableFuture.runAsync(() -> complete(Slow.PENDING.poll()), clients);
        completing.join();
        await().until(() -> first.isDone() || second.isDone());
        // The container tells the filter of the request's end once it is over; the slot then comes back.
        await().untilAsserted(() -> assertThat(get("/slow/quick").status()).isEqualTo(200));
        assertLeases(store, "slow", 1);

        CompletableFuture<RawHttp.Response> third = send("/slow/async");
        await().until(() -> Slow.PENDING.size() == 2);
        assertRejected(get("/slow/quick"));
        CompletableFuture.runAsync(() -> Slow.PENDING.forEach(ConcurrencyInContainerTest::complete), clients)
                .join();
        Slow.PENDING.clear();
        for (CompletableFuture<RawHttp.Response> f : List.of(first, second, third)) {
            assertThat(f.join().status()).isEqualTo(200);
            assertThat(f.join().body()).isEqualTo("late");
        }
        await().untilAsserted(() -> assertLeases(store, "slow", 0));
        assertThat(get("/slow/quick").status()).isEqualTo(200);
    }

    private static void complete(AsyncContext async) {
        try {
            async.getResponse().getWriter().write("late");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        async.complete();
    }

    /**
     * Whether the filter is mapped to {@code ASYNC} dispatches too (as the Spring Boot starter maps it) or, as the
     * documented {@code web.xml}, to {@code REQUEST} only, when the dispatch that resumes a waiting request bypasses it.
     */
    @ParameterizedTest
    @CsvSource({"local, REQUEST", "redis, REQUEST", "local, ASYNC", "redis, ASYNC"})
    void softWaitsForAFreedSlotAndHoldsItUntilTheEnd(String store, String dispatchers, @TempDir Path dir)
            throws Exception {
        start(dir, store, dispatchers.equals("ASYNC"));
        CompletableFuture<RawHttp.Response> a = send("/soft/block");
        CompletableFuture<RawHttp.Response> b = send("/soft/block");
        await().until(() -> Slow.ENTERED.get() == 2);
        CompletableFuture<RawHttp.Response> waiting = send("/soft/async");
        await().until(() -> Parked.PARKED.get() == 1);
        assertThat(Slow.ENTERED.get()).as("the third waits before the servlet").isEqualTo(2);
        assertLeases(store, "soft", 2);

        Slow.RELEASE.release();
        await().until(() -> Slow.PENDING.size() == 1);
        await().until(() -> a.isDone() || b.isDone());
        assertThat((a.isDone() ? a : b).join().status()).isEqualTo(200);
        assertThat(waiting)
                .as("the third took the freed slot, and its servlet went async")
                .isNotDone();
        assertLeases(store, "soft", 2);
        CompletableFuture<RawHttp.Response> fourth = send("/soft/quick");
        await().until(() -> Parked.PARKED.get() == 2);

        CompletableFuture.runAsync(() -> complete(Slow.PENDING.poll()), clients).join();
        RawHttp.Response third = waiting.join();
        assertThat(third.status()).as("no 429: it waited").isEqualTo(200);
        assertThat(third.body()).isEqualTo("late");
        assertThat(third.header("RateLimit")).isEqualTo("\"soft-concurrency\";r=0");
        assertThat(fourth.join().status())
                .as("the async request's end freed its slot")
                .isEqualTo(200);
        Slow.RELEASE.release();
        assertThat(a.join().status()).isEqualTo(200);
        assertThat(b.join().status()).isEqualTo(200);
        await().untilAsserted(() -> assertLeases(store, "soft", 0));

        // Every slot came back: two enter at once again, no wait.
        List<CompletableFuture<RawHttp.Response>> again = List.of(send("/soft/block"), send("/soft/block"));
        await().until(() -> Slow.ENTERED.get() == 6);
        assertThat(Parked.PARKED.get()).isEqualTo(2);
        Slow.RELEASE.release(2);
        assertThat(again).allSatisfy(f -> assertThat(f.join().status()).isEqualTo(200));
        assertLeases(store, "soft", 0);
    }

    @ParameterizedTest
    @CsvSource({"local, REQUEST", "redis, REQUEST", "local, ASYNC", "redis, ASYNC"})
    void softGivesUpAfterItsMaxDelayWithoutReachingTheServlet(String store, String dispatchers, @TempDir Path dir)
            throws Exception {
        start(dir, store, dispatchers.equals("ASYNC"));
        CompletableFuture<RawHttp.Response> holding = send("/brief/block");
        await().until(() -> Slow.ENTERED.get() == 1);
        RawHttp.Response late = get("/brief/block");
        assertThat(late.status()).as("no slot within 200ms").isEqualTo(429);
        assertThat(late.header("Retry-After")).isEqualTo("1");
        assertThat(Parked.PARKED.get()).as("it waited").isEqualTo(1);
        assertThat(Slow.ENTERED.get())
                .as("the rejected request never reached the servlet")
                .isEqualTo(1);
        assertLeases(store, "brief", 1);
        Slow.RELEASE.release();
        assertThat(holding.join().status()).isEqualTo(200);
        assertLeases(store, "brief", 0);
        assertThat(get("/brief/quick").status()).as("the slot is free again").isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aRuleWithConcurrencyAndLimitsFailsDeploymentNamingTheRule(String store, @TempDir Path dir) {
        List<String> logged = ContainerLog.deploymentFailures(() -> start(
                dir,
                store,
                "ratelimit.rules[3].name=both",
                "ratelimit.rules[3].paths=/both/**",
                "ratelimit.rules[3].concurrency=2",
                "ratelimit.rules[3].limits=5/1s"));
        assertThat(logged)
                .anySatisfy(m -> assertThat(m)
                        .startsWith(
                                "RateLimitFilter 'rateLimit' cannot start: file:" + dir.resolve("ratelimit.properties")
                                        + ": ratelimit.rules[3]: concurrency 2 makes a rule of calls in flight")
                        .contains("it cannot also have limits [5/1s]")
                        .contains("Declare two rules"));
    }
}
