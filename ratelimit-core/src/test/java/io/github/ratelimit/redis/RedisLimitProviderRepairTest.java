package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.CapturedLog;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Stored state of the limit store that is not what it should be (a key of the wrong type, an entry that does not
 * parse, a tampered cursor), written into a real Redis behind the store's back: it is ignored or replaced, never
 * obeyed, and one rule's garbage never reaches another rule.
 */
class RedisLimitProviderRepairTest {

    private static final Rule API =
            Rule.builder("api").key("user").limits("100/1m").build();
    private static final Rule BROKEN =
            Rule.builder("broken").key("user").limits("100/1m").build();

    @RegisterExtension
    static final LimitStoreRedis REDIS = new LimitStoreRedis();

    private static RedisLimitProvider store(String prefix) {
        return REDIS.store(prefix);
    }

    private static String prefix() {
        return LimitStoreRedis.prefix();
    }

    private static void set(RedisLimitProvider store, Rule rule, String key, String limits) {
        store.setLimits(rule, key, List.of(Limit.parse(limits)), "ops");
    }

    private static String ruleKey(String prefix, String rule) {
        return prefix + ":{limits}:rule:" + rule;
    }

    private static String stream(String prefix) {
        return prefix + ":{limits}:changes";
    }

    @Test
    void aRuleHashOfTheWrongTypeLeavesEveryOtherRulesLimitsInForce() {
        String prefix = prefix();
        try (RedisLimitProvider store = store(prefix)) {
            set(store, API, "alice", "1/1h");
            set(store, API, "bob", "2/1h");
            REDIS.client().set(ruleKey(prefix, "broken"), "garbage");

            assertThat(store.limitsFor(BROKEN, "mallory"))
                    .as("the broken rule's own limits")
                    .isNull();
            // Before, the WRONGTYPE reply counted as Redis being away: every key of every rule not yet read got its
            // rule's own limits until a refresh, and each refresh forgot all answers only for the next read of the
            // broken rule to start it again.
            assertThat(store.limitsFor(API, "alice")).containsExactly(Limit.parse("1/1h"));
            store.refresh();
            assertThat(store.limitsFor(BROKEN, "trent")).isNull();
            assertThat(store.limitsFor(API, "bob")).containsExactly(Limit.parse("2/1h"));
            assertThat(store.get("broken", "mallory")).isEmpty();
            assertThat(store.list("broken", null, 10).entries()).isEmpty();
        }
    }

    @Test
    void aChangeReplacesARuleHashAndAStreamOfTheWrongTypeAndWritesBothOrNeither() {
        String prefix = prefix();
        try (RedisLimitProvider store = store(prefix)) {
            REDIS.client().rpush(ruleKey(prefix, "api"), "garbage");
            REDIS.client().set(stream(prefix), "garbage");
            // Before, the hash was written, then the stream's WRONGTYPE failed the change half-applied.
            set(store, API, "alice", "3/1h");
            assertThat(REDIS.client().type(ruleKey(prefix, "api"))).isEqualTo("hash");
            assertThat(REDIS.client().type(stream(prefix))).isEqualTo("stream");
            assertThat(REDIS.client().xlen(stream(prefix)))
                    .as("a repair entry, then the change")
                    .isEqualTo(2);
            assertThat(store.get("api", "alice").orElseThrow().limits()).containsExactly(Limit.parse("3/1h"));
            assertThat(store.repairs()).isEqualTo(2);
            set(store, API, "bob", "4/1h");
            assertThat(store.repairs()).as("nothing more to repair").isEqualTo(2);
        }
    }

    @Test
    void theRefreshReplacesAStreamOfTheWrongTypeAndEveryInstanceAsksAgain() {
        String prefix = prefix();
        try (RedisLimitProvider a = store(prefix);
                RedisLimitProvider b = store(prefix)) {
            set(a, API, "carol", "5/1h");
            b.refresh();
            assertThat(b.limitsFor(API, "carol")).containsExactly(Limit.parse("5/1h"));
            // Behind everyone's back: carol's entry changes without a change in the stream, and the stream is lost.
            REDIS.client()
                    .hset(
                            ruleKey(prefix, "api").getBytes(StandardCharsets.UTF_8),
                            "carol".getBytes(StandardCharsets.UTF_8),
                            ("limits\t6/1h\tops\t" + System.currentTimeMillis()).getBytes(StandardCharsets.UTF_8));
            REDIS.client().set(stream(prefix), "garbage");
            set(a, API, "dave", "7/1h"); // replaces the stream, as a change does

            REDIS.client().set(stream(prefix), "garbage again");
            b.refresh(); // before, this failed, and every key b had not read got its rule's own limits from then on
            assertThat(REDIS.client().type(stream(prefix))).isEqualTo("stream");
            assertThat(b.repairs()).isEqualTo(1);
            assertThat(b.limitsFor(API, "carol"))
                    .as("b forgot what it knew, and read again")
                    .containsExactly(Limit.parse("6/1h"));
            assertThat(b.limitsFor(API, "dave")).containsExactly(Limit.parse("7/1h"));

            a.refresh(); // a finds the stream started again: it forgets its answers too
            assertThat(a.limitsFor(API, "carol")).containsExactly(Limit.parse("6/1h"));
            set(a, API, "erin", "8/1h");
            b.refresh();
            assertThat(b.limitsFor(API, "erin")).as("changes flow again").containsExactly(Limit.parse("8/1h"));
        }
    }

    /** Why each garbage value of {@link #anUnreadableEntryGivesTheRulesOwnLimitsAndListsAsUnreadable} is ignored. */
    private static final String[] WHY = {
        "the stored value 'garbage' is not '<limits|plan>",
        "no limits are given",
        "invalid limit ''",
        "250 limits, more than the 8 a rule may have",
        "two limits share the window 1h",
        "plan 'nope' is not known",
        "the stored limits '99999999999999999999/1s' cannot be used",
        "the stored value is not UTF-8 text"
    };

    @Test
    void anUnreadableEntryGivesTheRulesOwnLimitsAndListsAsUnreadable() {
        String prefix = prefix();
        String windows = String.join(
                ",",
                java.util.stream.IntStream.range(0, 250)
                        .mapToObj(i -> (1000 + i) + "/" + (i + 1) + "s")
                        .toList());
        List<byte[]> garbage = List.of(
                utf8("garbage"),
                utf8("limits\t"),
                utf8("limits\t5/1s,,\tops\tsoon"),
                utf8("limits\t" + windows + "\tops\t1"),
                utf8("limits\t3/1h burst=50,4/1h\tops\t1"),
                utf8("plan\tnope\tops\t1"),
                utf8("limits\t99999999999999999999/1s"),
                new byte[] {(byte) 0xC3, 0x28, 9});
        try (RedisLimitProvider store = store(prefix)) {
            byte[] hash = utf8(ruleKey(prefix, "api"));
            for (int i = 0; i < garbage.size(); i++) {
                REDIS.client().hset(hash, utf8("k" + i), garbage.get(i));
            }
            set(store, API, "fine", "9/1h");
            try (RateLimiter limiter = RateLimiter.builder().build()) {
                limiter.guard(API);
                // k4 reads, but two of its limits share a window: the store alone cannot tell, the rule can.
                LimitAdmin admin = LimitAdmin.of(limiter, store);
                for (int i = 0; i < garbage.size(); i++) {
                    assertThat(store.limitsFor(API, "k" + i)).as("k%d", i).isNull();
                    RedisLimitProvider.Entry entry = admin.get("api", "k" + i).orElseThrow();
                    // Before, only "not blank": any problem text passed, also one about another entry's value.
                    assertThat(entry.problem()).as("k%d", i).contains(WHY[i]);
                    assertThat(entry.limits()).as("k%d", i).isEmpty();
                    if (i != 4) {
                        assertThat(store.get("api", "k" + i).orElseThrow().problem())
                                .as("k%d", i)
                                .isNotBlank();
                    }
                }
                List<RedisLimitProvider.Entry> listed =
                        admin.list("api", null, 100).entries();
                assertThat(listed).hasSize(garbage.size() + 1);
                assertThat(listed).filteredOn(e -> e.problem() != null).hasSize(garbage.size());
            }
            assertThat(store.limitsFor(API, "fine")).containsExactly(Limit.parse("9/1h"));
        }
    }

    @Test
    void aStoredEntryOfMoreWindowsThanARuleMayHaveCostsNothingPerRequest() {
        String prefix = prefix();
        String windows = String.join(
                ",",
                java.util.stream.IntStream.range(0, 250)
                        .mapToObj(i -> (1000 + i) + "/" + (i + 1) + "s")
                        .toList());
        try (RedisLimitProvider store = store(prefix);
                RateLimiter limiter = RateLimiter.builder()
                        .limitProvider(store, Duration.ofMinutes(10))
                        .build()) {
            REDIS.client().hset(utf8(ruleKey(prefix, "api")), utf8("alice"), utf8("limits\t" + windows + "\tops\t1"));
            Guard guard = limiter.guard(API);
            long before = REDIS.calls("hget");
            for (int i = 0; i < 100; i++) {
                Decision decision = guard.acquire(
                        RequestContext.builder().principal("alice").build());
                assertThat(decision.verdicts().get(0).windows())
                        .as("the rule's own window")
                        .hasSize(1);
            }
            assertThat(REDIS.calls("hget") - before)
                    .as("the entry is read once")
                    .isEqualTo(1);
        }
    }

    /**
     * A stream replaced (a repair) within the millisecond of the last change an instance read starts its IDs again and
     * can give a new change that very ID: the instance checks its position by the entry's content, not its ID alone,
     * and reads the new stream from its start. (This made the test below fail now and then: the replacement and the
     * last change fell in one millisecond, and the instance never learnt of the change after it.) The two changes here
     * are alike in every field but their random token ({@code n}: same rule, key, operation and author), as a change
     * and the next one by the same operator within one millisecond are; without the token the instance took the new
     * stream's entry for the one it had read.
     */
    @Test
    void aReplacedStreamThatReusesTheLastIdReadIsReadFromItsStart() {
        String prefix = prefix();
        try (RedisLimitProvider a = store(prefix);
                RedisLimitProvider b = store(prefix)) {
            set(a, API, "carol", "5/1h");
            b.refresh();
            assertThat(b.limitsFor(API, "carol")).containsExactly(Limit.parse("5/1h"));
            String last = REDIS.client()
                    .xrevrange(stream(prefix), "+", "-", 1)
                    .get(0)
                    .getID()
                    .toString();
            set(a, API, "carol", "7/1h");
            // The stream replaced behind both instances' backs, its one change at the ID b read last.
            Map<String, String> change =
                    REDIS.client().xrevrange(stream(prefix), "+", "-", 1).get(0).getFields();
            REDIS.client().del(stream(prefix));
            REDIS.client().xadd(stream(prefix), new redis.clients.jedis.StreamEntryID(last), change);
            b.refresh();
            assertThat(b.limitsFor(API, "carol")).containsExactly(Limit.parse("7/1h"));
        }
    }

    @Test
    void aStreamEntryIdBeyondWhatClientsReadIsReplacedByTheNextRefreshAndChangesFlowAgain() {
        String[][] typos = {
            {"18446744073709551615-0", "18446744073709551615-1"},
            {"9223372036854775808-0", "9223372036854775808-1"},
            {"9223372036854775807-9223372036854775808", "9223372036854775807-9223372036854775809"}
        };
        for (String[] typo : typos) {
            String id = typo[0];
            String prefix = prefix();
            try (RedisLimitProvider a = store(prefix);
                    RedisLimitProvider b = store(prefix)) {
                set(a, API, "carol", "5/1h");
                b.refresh();
                assertThat(b.limitsFor(API, "carol")).containsExactly(Limit.parse("5/1h"));
                // Behind the stores' backs, with redis-cli; every ID after it is beyond a signed 64-bit number too.
                REDIS.client().sendCommand(redis.clients.jedis.Protocol.Command.XADD, stream(prefix), id, "op", "typo");
                b.refresh(); // before, every refresh failed parsing the ID: b never learnt of a change again
                assertThat(b.repairs()).as(id).isEqualTo(1);
                assertThat(firstOp(prefix)).as(id).isEqualTo("repair");
                set(a, API, "carol", "6/1h");
                b.refresh();
                assertThat(b.limitsFor(API, "carol"))
                        .as("%s: changes flow again", id)
                        .containsExactly(Limit.parse("6/1h"));

                REDIS.client()
                        .sendCommand(redis.clients.jedis.Protocol.Command.XADD, stream(prefix), typo[1], "op", "typo");
                set(a, API, "carol", "7/1h"); // before, this change's ID was beyond 2^63 too
                assertThat(a.repairs())
                        .as("%s: the change replaced the stream first", id)
                        .isEqualTo(1);
                assertThat(firstOp(prefix)).as(id).isEqualTo("repair");
                b.refresh();
                assertThat(b.limitsFor(API, "carol")).as(id).containsExactly(Limit.parse("7/1h"));
                assertThat(a.repairs() + b.repairs())
                        .as("nothing more to repair")
                        .isEqualTo(2);
            }
        }
    }

    @Test
    void anExhaustedStreamIdIsReplacedByTheNextChangeWhichIsWrittenWhole() {
        String prefix = prefix();
        try (RedisLimitProvider a = store(prefix);
                RedisLimitProvider b = store(prefix)) {
            set(a, API, "dave", "5/1h");
            b.refresh();
            assertThat(b.limitsFor(API, "dave")).containsExactly(Limit.parse("5/1h"));
            String max = "18446744073709551615-18446744073709551615";
            REDIS.client().sendCommand(redis.clients.jedis.Protocol.Command.XADD, stream(prefix), max, "op", "typo");
            REDIS.client().xdel(stream(prefix), new redis.clients.jedis.StreamEntryID(1, 0));
            // Before, XADD * failed ("exhausted the last possible ID") after the entry was written: a half change.
            set(a, API, "dave", "8/1h");
            assertThat(a.repairs()).isEqualTo(1);
            assertThat(REDIS.client().xlen(stream(prefix)))
                    .as("a repair entry, then the change")
                    .isEqualTo(2);
            assertThat(firstOp(prefix)).isEqualTo("repair");
            b.refresh();
            assertThat(b.limitsFor(API, "dave")).containsExactly(Limit.parse("8/1h"));
        }
    }

    @Test
    void moreChangesThanOneRefreshReadsAreAllAppliedByTheNextRefresh() {
        String prefix = prefix();
        try (RedisLimitProvider a = store(prefix);
                RedisLimitProvider b = store(prefix)) {
            set(a, API, "first", "1/1h");
            set(a, API, "last", "1/1h");
            b.refresh();
            assertThat(b.limitsFor(API, "first")).containsExactly(Limit.parse("1/1h"));
            assertThat(b.limitsFor(API, "last")).containsExactly(Limit.parse("1/1h"));
            set(a, API, "first", "2/1h");
            for (int i = 0; i < LimitAnswers.CHANGES_PER_REFRESH; i++) {
                set(a, API, "k" + i, "3/1h");
            }
            set(a, API, "last", "4/1h");
            b.refresh(); // before, this read the first 1,000 changes: "last" kept 1/1h until another refresh
            assertThat(b.limitsFor(API, "first")).containsExactly(Limit.parse("2/1h"));
            assertThat(b.limitsFor(API, "last")).containsExactly(Limit.parse("4/1h"));
            set(a, API, "last", "5/1h");
            b.refresh();
            assertThat(b.limitsFor(API, "last")).as("reads on from the newest").containsExactly(Limit.parse("5/1h"));
        }
    }

    private static String firstOp(String prefix) {
        return REDIS.client()
                .xrange(stream(prefix), "-", "+", 1)
                .get(0)
                .getFields()
                .get("op");
    }

    @Test
    void storedTextReachesNoProblemOrEntryUnescaped() {
        String prefix = prefix();
        String forged = "1/x\r\nWARNING: forged\u202e\u061c\u200b\ufeff' rule 'y";
        String[] values = {
            "limits\t" + forged + "\tops\t1",
            "limits\t5/1s," + forged + "\tops\t1",
            "plan\t" + forged + "\tops\t1",
            "limits\t1/1h\tmallory\u202e\u2028\u0085\u061c\t1"
        };
        try (RedisLimitProvider store = store(prefix)) {
            for (int i = 0; i < values.length; i++) {
                REDIS.client().hset(utf8(ruleKey(prefix, "api")), utf8("k" + i), utf8(values[i]));
            }
            for (int i = 0; i < values.length; i++) {
                RedisLimitProvider.Entry entry = store.get("api", "k" + i).orElseThrow();
                String text = entry.problem() + " " + entry.plan() + " " + entry.changedBy();
                // Before, the parser's message held the stored limits as they were: a line break and bidi controls.
                assertThat(text)
                        .as("k%d", i)
                        .doesNotContain("\r", "\n", "\u202e", "\u061c", "\u200b", "\ufeff", "\u2028", "\u0085");
                if (i < 3) {
                    assertThat(entry.problem()).as("k%d", i).contains("\\r\\nWARNING: forged\\u202e\\u061c");
                }
            }
            assertThat(store.get("api", "k3").orElseThrow().changedBy()).isEqualTo("mallory    ");
        }
    }

    @Test
    void hugeStoredTextMakesNoLongEntry() {
        String prefix = prefix();
        String huge = "\u0001".repeat(100_000);
        try (RedisLimitProvider store = store(prefix)) {
            REDIS.client().hset(utf8(ruleKey(prefix, "api")), utf8("limits"), utf8("limits\ta" + huge + "\tops\t1"));
            REDIS.client().hset(utf8(ruleKey(prefix, "api")), utf8("actor"), utf8("limits\t1/1h\t" + huge + "\t1"));
            RedisLimitProvider.Entry limits = store.get("api", "limits").orElseThrow();
            assertThat(limits.limits()).as("never obeyed").isEmpty();
            assertThat(limits.problem())
                    .startsWith("unreadable: the stored limits 'a\\u0001")
                    .hasSizeLessThan(3_000);
            RedisLimitProvider.Entry actor = store.get("api", "actor").orElseThrow();
            assertThat(actor.limits()).hasToString("[1/1h]");
            assertThat(actor.changedBy()).hasSize(LimitEntries.MAX_ACTOR + 1).endsWith(" …");
        }
    }

    @Test
    void aTamperedCursorIsRefusedNotSentToRedis() {
        try (RedisLimitProvider store = store(prefix())) {
            for (String cursor :
                    new String[] {"18446744073709551616", "99999999999999999999999999", "-1", "1e3", " 7", ""}) {
                assertThatThrownBy(() -> store.list("api", cursor, 10))
                        .as("cursor '%s'", cursor)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("cursor");
            }
            assertThat(store.list("api", "18446744073709551615", 10).entries()).isEmpty();
        }
    }

    @Test
    void theAuditLogEscapesWhatCouldForgeALine() {
        List<String> lines;
        try (CapturedLog audit = CapturedLog.of("io.github.ratelimit.limits");
                RedisLimitProvider store = store(prefix())) {
            String key =
                    "a\r\nINFO: Limits of rule 'api' key 'root' set to 1000000/1s by 'admin'\u2028\u2029\u0085\t\u0000z";
            store.setLimits(API, key, List.of(Limit.parse("1/1h")), "ops\nWARNING: forged\u2028");
            store.assignPlan(API, key, "gold", "ops\r");
            store.remove("api", key, "ops\u0007");
            lines = audit.messages();
        }
        assertThat(lines).hasSize(3);
        for (String line : lines) {
            assertThat(line).doesNotContain("\r", "\n", "\u2028", "\u2029", "\u0085", "\t", "\u0000", "\u0007");
            assertThat(line).contains("a\\r\\nINFO: Limits of rule").contains("\\u2028\\u2029\\u0085\\t\\u0000z");
        }
        assertThat(lines.get(0)).contains("'ops\\nWARNING: forged\\u2028'");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
