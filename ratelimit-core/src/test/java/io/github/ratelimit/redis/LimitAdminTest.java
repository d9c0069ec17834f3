package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.testing.CapturedLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The admin operations in plain Java, on a real Redis: the checks every way to them shares, and addressing. */
class LimitAdminTest {

    private static final Rule API =
            Rule.builder("api").key("header:X-Client").limits("2/1h").build();
    private static final Rule LOG = Rule.builder("log")
            .key("header:X-Client")
            .limits("5/1m")
            .algorithm(Algorithm.SLIDING_WINDOW_LOG)
            .build();
    private static final Rule BY_ADDRESS =
            Rule.builder("by-address").key("ip").limits("2/1h").build();

    @RegisterExtension
    static final LimitStoreRedis REDIS = new LimitStoreRedis();

    private static RedisLimitProvider store() {
        return REDIS.store(LimitStoreRedis.prefix());
    }

    private static RateLimiter limiter(RedisLimitProvider store) {
        return RateLimiter.builder()
                .limitProvider(store, Duration.ofMinutes(10))
                .clientIpResolver(
                        ClientIpResolver.builder().trustedProxies("127.0.0.1").build())
                .build();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static String windows(int n) {
        return String.join(
                ",",
                java.util.stream.IntStream.range(0, n)
                        .mapToObj(i -> (1000 + i) + "/" + (i + 1) + "s")
                        .toList());
    }

    @Test
    void limitsTheRuleCannotUseAreRefusedWithTheValidationMessageOnEveryJavaWay() {
        try (RedisLimitProvider store = store();
                RateLimiter limiter = limiter(store)) {
            limiter.guard(API, LOG);
            LimitAdmin admin = LimitAdmin.of(limiter, store);
            String[][] cases = {
                {"3/1h burst=50", "limit '3/1h burst=50' sets a burst, which a SLIDING_WINDOW_LOG rule cannot have"},
                {"5/1s,10/1s", "two limits share the window 1s"},
                {"10001/1h", "more than the 10000 a SLIDING_WINDOW_LOG rule keeps per key"},
                {windows(9), "9 limits, more than the 8 a rule may have"},
                {windows(250), "250 limits, more than the 8 a rule may have"},
                {"1/1h,", "invalid limit ''"}
            };
            for (String[] c : cases) {
                assertThatThrownBy(() -> admin.setLimits("log", "k", c[0], "ops"))
                        .as(c[0])
                        .isInstanceOf(InvalidRateLimitConfigurationException.class)
                        .hasMessageContaining(c[1])
                        .hasMessageContaining("key 'k' of rule 'log'");
                if (!c[0].endsWith(",") && !c[0].equals(windows(250)) && !c[0].equals(windows(9))) {
                    List<Limit> parsed = java.util.Arrays.stream(c[0].split(","))
                            .map(Limit::parse)
                            .toList();
                    assertThatThrownBy(() -> store.setLimits(LOG, "k", parsed, "ops"))
                            .as("store: %s", c[0])
                            .isInstanceOf(InvalidRateLimitConfigurationException.class)
                            .hasMessageContaining(c[1]);
                }
            }
            assertThatThrownBy(() -> admin.assignPlan("log", "k", "wide", "ops"))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessageContaining(
                            "plan 'wide' [100/1m burst=500] for key 'k' of rule 'log': the rule cannot use "
                                    + "them: limit '100/1m burst=500' sets a burst");
            assertThatThrownBy(() -> store.assignPlan(LOG, "k", "wide", "ops")).hasMessageContaining("sets a burst");
            assertThatThrownBy(() -> admin.assignPlan("log", "k", "platinum", "ops"))
                    .hasMessageContaining("known plans: [gold, tiny, wide]");
            assertThat(admin.get("log", "k")).as("nothing stored").isEmpty();
            admin.assignPlan("log", "k", "tiny", "ops");
            admin.setLimits("api", "k", "100/1m burst=500", "ops");
            assertThat(admin.get("api", "k").orElseThrow().limits()).containsExactly(Limit.parse("100/1m burst=500"));
        }
        assertThatThrownBy(() -> RedisLimitProvider.builder()
                        .plan(
                                "big",
                                java.util.Arrays.stream(windows(9).split(","))
                                        .map(Limit::parse)
                                        .toList()))
                .hasMessageContaining("9 limits, more than the 8 a rule may have");
    }

    @Test
    void anUnknownRuleIsRefusedByEveryOperationNamingTheKnownOnes() {
        try (RedisLimitProvider store = store();
                RateLimiter limiter = limiter(store)) {
            limiter.guard(API);
            // A rule of another phase's filter, not (yet) registered with this limiter, is known all the same.
            LimitAdmin admin = LimitAdmin.of(limiter, store, List.of(LOG));
            List<Runnable> operations = List.of(
                    () -> admin.get("nope", "k"),
                    () -> admin.list("nope", null, 10),
                    () -> admin.setLimits("nope", "k", "1/1h", "ops"),
                    () -> admin.assignPlan("nope", "k", "tiny", "ops"),
                    () -> admin.remove("nope", "k", "ops"),
                    () -> admin.reset("nope", "k", "ops"));
            for (Runnable operation : operations) {
                assertThatThrownBy(operation::run)
                        .isInstanceOf(LimitAdmin.UnknownRuleException.class)
                        .hasMessage("rule 'nope' is not known here; known rules: [api, log]. Name one of them, as the "
                                + "limiter lists them.");
            }
            admin.setLimits("log", "k", "1/1h", "ops");
            assertThat(admin.ruleNames()).containsExactly("api", "log");
        }
    }

    @Test
    void everyKeyAResolverProducesIsReachedByItsAddressOrInFull() {
        try (RedisLimitProvider store = store();
                RateLimiter limiter = limiter(store)) {
            Guard byClient = limiter.guard(API);
            Guard byAddress = limiter.guard(BY_ADDRESS);
            LimitAdmin admin = LimitAdmin.of(limiter, store);
            String longValue = "v".repeat(200);
            String[] values = {
                "a+b",
                "t~x",
                "~sha256:abc",
                "back\\slash",
                "100%",
                "a/b",
                ".",
                "..",
                "tab\there",
                "line\u2028sep",
                "caf\u00e9",
                "\ud83d\ude00",
                longValue
            };
            List<Object[]> cases = new ArrayList<>();
            for (String v : values) {
                cases.add(new Object[] {
                    API,
                    byClient,
                    RequestContext.builder().header("X-Client", v).build(),
                    v
                });
            }
            cases.add(new Object[] {
                BY_ADDRESS,
                byAddress,
                RequestContext.builder()
                        .remoteAddress("127.0.0.1")
                        .header("X-Forwarded-For", "2001:db8:9:9::1")
                        .build(),
                null
            });
            for (Object[] c : cases) {
                Rule rule = (Rule) c[0];
                Guard guard = (Guard) c[1];
                RequestContext request = (RequestContext) c[2];
                String key = guard.acquire(request).verdicts().get(0).key();
                guard.acquire(request);
                assertThat(guard.acquire(request).outcome()).as(key).isEqualTo(Outcome.REJECTED);
                String address = LimitAdmin.address(key);
                assertThat(address)
                        .as(key)
                        .matches("[A-Za-z0-9._~:@!$'()*,=-]+")
                        .isNotIn(".", "..");
                assertThat(LimitAdmin.key(address)).isEqualTo(key);

                admin.reset(rule.name(), address, "ops");
                assertThat(guard.acquire(request).outcome()).as("%s reset", key).isEqualTo(Outcome.ALLOWED);
                admin.setLimits(rule.name(), address, "20/1h", "ops");
                for (int i = 0; i < 10; i++) {
                    assertThat(guard.acquire(request).outcome())
                            .as("%s on 20/1h", key)
                            .isEqualTo(Outcome.ALLOWED);
                }
                assertThat(admin.list(rule.name(), null, 100).entries())
                        .extracting(RedisLimitProvider.Entry::key)
                        .contains(key);
                assertThat(admin.get(rule.name(), key).orElseThrow().key()).isEqualTo(key);
                assertThat(admin.remove(rule.name(), address, "ops")).isTrue();
                assertThat(admin.get(rule.name(), address)).isEmpty();
            }
            assertThat(LimitAdmin.key(longValue))
                    .as("a long key in full is hashed as the limiter hashes it")
                    .startsWith("~sha256:")
                    .isEqualTo(byClient.acquire(RequestContext.builder()
                                    .header("X-Client", longValue)
                                    .build())
                            .verdicts()
                            .get(0)
                            .key());
        }
    }

    @Test
    void everyEntryAListingShowsIsShownAndRemovedByItsAddressEvenOneStoredUnderALongKey() {
        String prefix = LimitStoreRedis.prefix();
        try (RedisLimitProvider store = REDIS.store(prefix);
                RateLimiter limiter = limiter(store)) {
            limiter.guard(API);
            LimitAdmin admin = LimitAdmin.of(limiter, store);
            byte[] hash = utf8(prefix + ":{limits}:rule:api");
            // Stored by an older version (a long key in full) or another tool, behind the limiter's back.
            String[] stored = {"x".repeat(200), "u".repeat(129), "~b64:YWxpY2U", "~stored:YWxpY2U", "~sha256:0", ""};
            for (String key : stored) {
                REDIS.client().hset(hash, utf8(key), utf8("limits\t3/1h\tops\t1"));
            }
            // Written by anyone with access to Redis: a field that is not UTF-8, which no key is.
            byte[] notUtf8 = {(byte) 0xff, 'k', (byte) 0xc3};
            REDIS.client().hset(hash, notUtf8, utf8("limits\t3/1h\tops\t1"));
            assertThat(admin.setLimits("api", "alice", "4/1h", "ops").limits()).hasToString("[4/1h]");
            List<RedisLimitProvider.Entry> listed = admin.list("api", null, 100).entries();
            assertThat(listed)
                    .extracting(RedisLimitProvider.Entry::key)
                    .containsExactlyInAnyOrder(
                            "x".repeat(200),
                            "u".repeat(129),
                            "~b64:YWxpY2U",
                            "~stored:YWxpY2U",
                            "~sha256:0",
                            "",
                            "\uFFFDk\uFFFD",
                            "alice");
            assertThat(listed)
                    .filteredOn(e -> e.key().isEmpty())
                    .extracting(RedisLimitProvider.Entry::address)
                    .containsExactly("~stored:");
            assertThat(listed)
                    .filteredOn(e -> e.key().contains("\uFFFD"))
                    .extracting(RedisLimitProvider.Entry::address)
                    .containsExactly("~stored:_2vD");
            for (RedisLimitProvider.Entry entry : listed) {
                String address = entry.address();
                assertThat(admin.get("api", address))
                        .as(address)
                        .map(RedisLimitProvider.Entry::key)
                        .contains(entry.key());
                assertThat(admin.remove("api", address, "ops")).as(address).isTrue();
                assertThat(REDIS.client().hexists(hash, LimitAdmin.field(address)))
                        .as(address)
                        .isFalse();
            }
            assertThat(REDIS.client().exists(hash))
                    .as("every entry listed was removed")
                    .isFalse();
            // A long field is shown cut, never in the middle of a character.
            assertThat(LimitAdmin.shown(utf8("a".repeat(299) + "\uD83D\uDE00".repeat(10))))
                    .isEqualTo("a".repeat(299) + "…");
            assertThat(LimitAdmin.shown(utf8("a".repeat(298) + "\uD83D\uDE00".repeat(10))))
                    .isEqualTo("a".repeat(298) + "\uD83D\uDE00…");
            for (String noKey : new String[] {"~stored:", "~stored:_2vD"}) {
                assertThatThrownBy(() -> admin.setLimits("api", noKey, "1/1h", "ops"))
                        .as(noKey)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("which no key is");
                assertThatThrownBy(() -> admin.reset("api", noKey, "ops"))
                        .as(noKey)
                        .hasMessageContaining("can be shown and removed, not set or reset");
            }
            // The key in full still means the limiter's (hashed) key, for set and reset alike.
            admin.setLimits("api", "x".repeat(200), "5/1h", "ops");
            assertThat(admin.list("api", null, 100).entries())
                    .extracting(RedisLimitProvider.Entry::key)
                    .containsExactly(LimitAdmin.key("x".repeat(200)));
        }
    }

    @Test
    void aKeyWithALoneSurrogateIsRefusedByEveryOperationAndReachesNoOtherKey() {
        try (RedisLimitProvider store = store();
                RateLimiter limiter = limiter(store)) {
            limiter.guard(API);
            LimitAdmin admin = LimitAdmin.of(limiter, store);
            admin.setLimits("api", "?", "7/1h", "ops");
            for (String key : new String[] {"\uD800", "a\uDC00b", "x\uDBFF"}) {
                List<Runnable> operations = List.of(
                        () -> admin.get("api", key),
                        () -> admin.remove("api", key, "ops"),
                        () -> admin.setLimits("api", key, "1/1h", "ops"),
                        () -> admin.assignPlan("api", key, "tiny", "ops"),
                        () -> admin.reset("api", key, "ops"),
                        () -> limiter.reset("api", key),
                        () -> store.setLimits(API, key, List.of(Limit.parse("1/1h")), "ops"),
                        () -> store.get("api", key),
                        () -> store.remove("api", key, "ops"));
                for (Runnable operation : operations) {
                    assertThatThrownBy(operation::run)
                            .as(io.github.ratelimit.support.LogText.escape(key))
                            .isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("contains a lone UTF-16 surrogate")
                            .hasMessageContaining("which has no UTF-8 form");
                }
            }
            assertThat(admin.get("api", "?").orElseThrow().limits())
                    .as("the key '?' is untouched")
                    .containsExactly(Limit.parse("7/1h"));
            assertThat(admin.list("api", null, 100).entries()).hasSize(1);
        }
    }

    @Test
    void aPlanNameIsCheckedByOneRuleWithOneMessageEverywhere() {
        String prefix = LimitStoreRedis.prefix();
        try (RedisLimitProvider store = REDIS.store(prefix);
                RateLimiter limiter = limiter(store)) {
            limiter.guard(API);
            LimitAdmin admin = LimitAdmin.of(limiter, store);
            String[][] cases = {
                {"gold plan", "plan name 'gold plan' contains ' ' at index 4"},
                {"gold\t", "plan name 'gold\\t' contains '\\t' at index 4"},
                {"x'y", "plan name 'x\\'y' contains '\\'' at index 1"},
                {"p".repeat(65), "is 65 characters long, over the limit of 64"},
                {"", "plan name is empty"}
            };
            for (String[] c : cases) {
                String name = c[0];
                List<Runnable> entries = List.of(
                        () -> io.github.ratelimit.LimitProvider.builder().plan(name, "1/1s"),
                        () -> RedisLimitProvider.builder().plan(name, List.of(Limit.parse("1/1s"))),
                        () -> admin.assignPlan("api", "k", name, "ops"),
                        () -> store.assignPlan(API, "k", name, "ops"));
                for (Runnable entry : entries) {
                    assertThatThrownBy(entry::run)
                            .as(c[1])
                            .isInstanceOf(InvalidRateLimitConfigurationException.class)
                            .hasMessageContaining(c[1])
                            .hasMessageEndingWith(io.github.ratelimit.internal.PlanNames.ACTION);
                }
                if (name.contains("\t")) {
                    continue; // the stored value's fields are separated by tabs: it cannot hold this name
                }
                REDIS.client()
                        .hset(utf8(prefix + ":{limits}:rule:api"), utf8("stored"), utf8("plan\t" + name + "\tops\t1"));
                RedisLimitProvider.Entry read = admin.get("api", "stored").orElseThrow();
                assertThat(read.problem()).as(c[1]).contains(c[1]);
                assertThat(read.plan()).as(c[1]).isNull();
            }
            for (String unknown : new String[] {"platinum"}) {
                String message = "plan 'platinum' is not known; known plans: [gold, tiny, wide]";
                assertThatThrownBy(() -> admin.assignPlan("api", "k", unknown, "ops"))
                        .hasMessage(message);
                REDIS.client()
                        .hset(
                                utf8(prefix + ":{limits}:rule:api"),
                                utf8("stored"),
                                utf8("plan\t" + unknown + "\tops\t1"));
                assertThat(admin.get("api", "stored").orElseThrow().problem()).startsWith(message);
            }
        }
    }

    @Test
    void addressesRoundTripAndAnythingElseStartingLikeOneIsRefused() {
        Random random = new Random(7);
        for (int i = 0; i < 2_000; i++) {
            StringBuilder sb = new StringBuilder();
            int length = 1 + random.nextInt(40);
            while (sb.length() < length) {
                int c = random.nextInt(8) == 0
                        ? random.nextInt(0x20)
                        : random.nextInt(4) == 0
                                ? "\\+~/%.:@=;?#&".charAt(random.nextInt(13))
                                : 0x20 + random.nextInt(0x3000);
                if (!Character.isSurrogate((char) c)) {
                    sb.append((char) c);
                }
            }
            String key = sb.toString();
            assertThat(LimitAdmin.key(LimitAdmin.address(key))).as("%s", key).isEqualTo(key);
        }
        for (String bad : new String[] {"~b64:", "~b64:!!!", "~b64:_w", "~b64:Y", "", null}) {
            assertThatThrownBy(() -> LimitAdmin.key(bad)).as("%s", bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void aResetIsLoggedWithWhoMadeItAndNothingThatForgesALine() {
        List<String> lines;
        try (CapturedLog audit = CapturedLog.of("io.github.ratelimit.limits");
                RateLimiter limiter = RateLimiter.builder().build()) {
            limiter.guard(API);
            LimitAdmin admin = LimitAdmin.of(limiter, null);
            admin.reset("api", "k\r\nINFO Rule 'api' key 'x' reset by 'root'", "ops\u2029\u202e");
            assertThatThrownBy(() -> admin.setLimits("api", "k", "1/1h", "ops"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("ratelimit.limit-store.enabled=true");
            lines = audit.messages();
        }
        assertThat(lines)
                .containsExactly(
                        "Rule 'api' key 'k\\r\\nINFO Rule \\'api\\' key \\'x\\' reset by \\'root\\'' reset by 'ops\\u2029\\u202e'");
    }
}
