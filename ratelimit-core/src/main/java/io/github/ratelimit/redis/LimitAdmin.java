package io.github.ratelimit.redis;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.KeyExpressions;
import io.github.ratelimit.internal.PlanNames;
import io.github.ratelimit.internal.RuleChanges;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.support.LogText;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The operations operators run on live keys (per-key limits, plans, resets), with one set of checks whichever way
 * they come: the Spring Boot starter's {@code ratelimitkeys} Actuator endpoint, the object a {@code web.xml}
 * application's filter publishes in the servlet context, or plain Java. Every operation names a rule the limiter
 * knows ({@link UnknownRuleException} otherwise) and a key by its address; changes are refused, with the validation
 * message, when the rule cannot use the limits; resets and changes are logged with who made them.
 *
 * <p><b>Addressing.</b> A key is the text the rule counts by, as decisions, listings and the {@code ratelimits}
 * endpoint show it: canonical (the limiter escapes {@code \ + ~} in values, so {@code a+b} is {@code a\+b}), and a
 * key over 128 characters stored as {@code ~sha256:<hex>}. Any of these is accepted as an address:
 * <ul>
 *   <li>the key as shown;</li>
 *   <li>for a key over 128 characters, the key in full: it is hashed as the limiter hashes it;</li>
 *   <li>its {@link #address(String) address}: the key itself when it has only characters that need no escaping in
 *       a URL path segment or query ({@code A-Z a-z 0-9 - . _ ~ : @ ! $ ' ( ) * , =}, and is not {@code .} or
 *       {@code ..}, and does not start like an encoded address), otherwise {@value #ADDRESS_PREFIX} and the key's
 *       UTF-8 bytes in unpadded base64url. No key the limiter counts by starts with {@value #ADDRESS_PREFIX} (keys
 *       escape a leading {@code ~}), so the two never meet; an entry stored by other means under such a key gets an
 *       encoded address too. Listings give every entry's address: it works in a URL path, in a query, in JSON and in
 *       Java alike, for any key (an IPv6 client's {@code 2001:db8::/64}, a key holding a {@code /}, a {@code %} or a
 *       control character);</li>
 *   <li>for an entry stored under a field the limiter never reads (by an older version, another tool, or anyone
 *       with access to Redis: a key over 128 characters in full, the empty field, bytes that are not UTF-8), the
 *       listing's address is {@value #STORED_PREFIX} and the field's bytes in unpadded base64url: show and delete
 *       reach that very entry, so every entry a listing shows can be removed (set and reset take a key over 128
 *       characters as the key in full, hashed, and refuse the others).</li>
 * </ul>
 * A key with a lone UTF-16 surrogate is refused: it has no UTF-8 form, so it would reach another key.
 *
 * <p><b>Keys over 128 characters.</b> The limiter counts a key over 128 characters as {@code ~sha256:} and the
 * SHA-256 of the key in 64 lowercase hex digits, and decisions, the most-rejected keys and listings show it so. That
 * text is the key's address: a reset through it forgets what the client's calls counted (its state under every
 * algorithm's Redis key, a concurrency rule's leases included), and limits or a plan set through it are the ones the
 * client's next calls get, exactly as through the key in full. No value can pose as a hash (values escape a
 * {@code ~}), so a {@code ~sha256:} key that is no hash (another length, upper-case or other digits), or
 * {@code ~missing} (the bucket of calls without a key) for a rule whose {@link Rule#onMissingKey()} is not
 * {@code SHARED}, is no key the rule counts by: {@link #setLimits}, {@link #assignPlan} and {@link #reset} refuse it
 * ({@link IllegalArgumentException}: a 400 on every face) rather than answer as done and reach no client, and an
 * entry stored under such a field, or under a {@value #STORED_PREFIX} address, is listed and shown with a
 * {@linkplain RedisLimitProvider.Entry#problem() problem} saying that no client gets its limits, and can be deleted.
 *
 * <p>The rules known are those the limiter has registered ({@link RateLimiter#rules()}: every URL rule and annotation
 * once an application has started) and those given when this was made (URL rules of another phase's filter).
 * Thread-safe, if the limiter and the store are.
 */
public final class LimitAdmin {

    /** The start of an encoded address. */
    public static final String ADDRESS_PREFIX = "~b64:";

    /**
     * The start of the address of an entry stored under a field the limiter never reads (a key over 128 characters in
     * full, the empty field, bytes that are not UTF-8): show and delete reach that entry as stored.
     */
    public static final String STORED_PREFIX = "~stored:";

    /**
     * The longest field of a rule's hash a listing shows, in bytes: an entry stored under a longer one (which no key
     * is, and whose address no URL could carry) is removed by the listing that finds it, a repair
     * ({@link RedisLimitProvider#repairs()}).
     */
    public static final int MAX_FIELD = 2048;

    /** The most characters of a field's text an answer shows. */
    private static final int MAX_SHOWN = 300;

    private static final System.Logger AUDIT = System.getLogger("io.github.ratelimit.limits");

    /** Thrown when an operation names a rule the limiter does not know: its message names those it knows. */
    public static final class UnknownRuleException extends IllegalArgumentException {

        private static final long serialVersionUID = 1L;

        /** The name given. */
        private final String rule;
        /** The names of the rules known, in order. */
        private final List<String> knownRules;

        UnknownRuleException(String rule, List<String> knownRules) {
            super("rule " + LogText.quote(rule) + " is not known here; known rules: " + knownRules
                    + ". Name one of them, as the limiter lists them.");
            this.rule = rule;
            this.knownRules = List.copyOf(knownRules);
        }

        /** @return the name given */
        public String rule() {
            return rule;
        }

        /** @return the names of the rules known, in order */
        public List<String> knownRules() {
            return knownRules;
        }
    }

    /**
     * A rule's limits and mode: as configured, and as it decides now.
     *
     * @param rule the rule's name
     * @param configuredLimits its limits as configured (none for a concurrency rule)
     * @param configuredMode its mode as configured
     * @param limits its limits now: the configured ones, or those it was changed to at run time
     * @param mode its mode now
     * @param changed whether it was changed at run time (and not taken back)
     * @param changedBy who changed it, or {@code null} when it is not changed
     * @param changedAt when, or {@code null} when it is not changed or the change does not say
     * @param everyInstance whether the change is kept in Redis, for every instance; {@code false} when it applies to
     *        this instance only (no limit store: until it restarts)
     * @param problem why a change stored in Redis is ignored (garbage, or one the rule cannot take), or {@code null}
     */
    public record RuleLimits(
            String rule,
            List<Limit> configuredLimits,
            Mode configuredMode,
            List<Limit> limits,
            Mode mode,
            boolean changed,
            @Nullable String changedBy,
            @Nullable Instant changedAt,
            boolean everyInstance,
            @Nullable String problem) {}

    /**
     * A plan's limits: as configured, and as it decides now.
     *
     * @param plan the plan's name
     * @param configuredLimits its limits as configured
     * @param limits its limits now: the configured ones, or those it was changed to at run time
     * @param changed whether it was changed at run time (and not taken back)
     * @param changedBy who changed it, or {@code null} when it is not changed
     * @param changedAt when, or {@code null} when it is not changed or the change does not say
     * @param everyInstance whether the change is kept in Redis, for every instance; {@code false} when it applies to
     *        this instance only (no limit store: until it restarts)
     * @param problem why a change stored in Redis is ignored (garbage), or {@code null}
     */
    public record PlanLimits(
            String plan,
            List<Limit> configuredLimits,
            List<Limit> limits,
            boolean changed,
            @Nullable String changedBy,
            @Nullable Instant changedAt,
            boolean everyInstance,
            @Nullable String problem) {}

    /** A plan that is not configured: its message names the plans that are. */
    public static final class UnknownPlanException extends IllegalArgumentException {

        private static final long serialVersionUID = 1L;

        /**
         * @param plan the name asked for
         * @param known the plans' names
         */
        UnknownPlanException(String plan, Collection<String> known) {
            super(PlanNames.unknown(plan, known));
        }
    }

    private final RateLimiter limiter;
    private final @Nullable RedisLimitProvider limitStore;
    /** Plans changed at run time without a limit store, in this instance only. */
    private final Map<String, LimitEntries.RuleEntry> localPlans = new ConcurrentHashMap<>();
    /** Rules changed at run time without a limit store, in this instance only. */
    private final Map<String, LimitEntries.RuleEntry> localChanges = new ConcurrentHashMap<>();

    private final List<Rule> declared;
    private final Supplier<? extends Collection<RateLimiter>> others;

    private LimitAdmin(
            RateLimiter limiter,
            @Nullable RedisLimitProvider limitStore,
            Collection<Rule> declared,
            Supplier<? extends Collection<RateLimiter>> others) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.limitStore = limitStore;
        this.declared = List.copyOf(declared);
        this.others = Objects.requireNonNull(others, "others");
    }

    /**
     * @param limiter the limiter whose rules are named and whose keys are reset
     * @param limitStore where per-key limits are kept, or {@code null} when they are not (resets still work)
     * @return the operations
     */
    public static LimitAdmin of(RateLimiter limiter, @Nullable RedisLimitProvider limitStore) {
        return new LimitAdmin(limiter, limitStore, List.of(), List::of);
    }

    /**
     * @param limiter the limiter whose rules are named and whose keys are reset
     * @param limitStore where per-key limits are kept, or {@code null} when they are not (resets still work)
     * @param declared rules known before the limiter registers them (a rules file's URL rules of every phase)
     * @return the operations
     */
    public static LimitAdmin of(
            RateLimiter limiter, @Nullable RedisLimitProvider limitStore, Collection<Rule> declared) {
        return new LimitAdmin(limiter, limitStore, declared, List::of);
    }

    /**
     * For an application whose rules are decided by several limiters (a {@code web.xml} application's filter
     * declared once per phase, each with a limiter and a store of its own): every rule of any of them is known, and
     * a reset reaches the limiters that count by the rule, whichever filter published this.
     *
     * @param limiter the limiter whose rules are named and whose keys are reset
     * @param limitStore where per-key limits are kept, or {@code null} when they are not (resets still work)
     * @param declared rules known before the limiters register them (a rules file's URL rules of every phase)
     * @param others the other limiters, asked at each operation (they may start after this is made)
     * @return the operations
     */
    public static LimitAdmin of(
            RateLimiter limiter,
            @Nullable RedisLimitProvider limitStore,
            Collection<Rule> declared,
            Supplier<? extends Collection<RateLimiter>> others) {
        return new LimitAdmin(limiter, limitStore, declared, others);
    }

    /** @return this admin's limiter, then the others, each once */
    private List<RateLimiter> limiters() {
        List<RateLimiter> all = new ArrayList<>();
        all.add(limiter);
        for (RateLimiter other : others.get()) {
            if (all.stream().noneMatch(l -> l == other)) {
                all.add(other);
            }
        }
        return all;
    }

    /** @return whether per-key limits are kept at run time (a {@link RedisLimitProvider}); resets need none */
    public boolean keepsLimits() {
        return limitStore != null;
    }

    /** @return the names of every rule known, in order */
    public List<String> ruleNames() {
        return List.copyOf(rules().keySet());
    }

    /**
     * @param name a rule's name
     * @return the rule
     * @throws UnknownRuleException naming the known rules
     */
    public Rule rule(String name) {
        Map<String, Rule> rules = rules();
        Rule rule = name == null ? null : rules.get(name);
        if (rule == null) {
            throw new UnknownRuleException(name, List.copyOf(rules.keySet()));
        }
        return rule;
    }

    private Map<String, Rule> rules() {
        Map<String, Rule> rules = new TreeMap<>();
        declared.forEach(r -> rules.put(r.name(), r));
        List<RateLimiter> all = limiters();
        for (int i = all.size() - 1; i >= 0; i--) {
            all.get(i).rules().forEach(r -> rules.put(r.name(), r)); // this admin's own limiter's rules win
        }
        return rules;
    }

    /**
     * @param key a key as the limiter counts by it
     * @return its address: the key when it is safe in a URL path segment and query as it is, else
     *         {@value #ADDRESS_PREFIX} and its UTF-8 bytes in unpadded base64url
     */
    public static String address(String key) {
        return address(key.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * @param field a field of a rule's hash in Redis: what an entry is stored under
     * @return the address that reaches that very entry: for a key the limiter may count by (UTF-8, 1 to 128
     *         characters), the key when it is safe in a URL path segment and query as it is, else
     *         {@value #ADDRESS_PREFIX} and the field in unpadded base64url; for any other field,
     *         {@value #STORED_PREFIX} and the field in unpadded base64url
     */
    public static String address(byte[] field) {
        String key = LimitEntries.utf8(field);
        if (key == null || key.isEmpty() || key.length() > KeyExpressions.MAX_KEY_LENGTH) {
            return STORED_PREFIX + base64(field); // not a key the limiter counts by (it hashes long ones)
        }
        boolean plain = !key.equals(".")
                && !key.equals("..")
                && !key.startsWith(ADDRESS_PREFIX)
                && !key.startsWith(STORED_PREFIX)
                && key.chars()
                        .allMatch(c -> (c >= 'a' && c <= 'z')
                                || (c >= 'A' && c <= 'Z')
                                || (c >= '0' && c <= '9')
                                || "-._~:@!$'()*,=".indexOf(c) >= 0);
        return plain ? key : ADDRESS_PREFIX + base64(field);
    }

    /**
     * @param field a field of a rule's hash in Redis
     * @return it as text for people: its UTF-8, with U+FFFD for bytes that are not, cut after 300 characters (the
     *         address reaches it whole)
     */
    public static String shown(byte[] field) {
        String text = new String(field, StandardCharsets.UTF_8);
        if (text.length() <= MAX_SHOWN) {
            return text;
        }
        int end = Character.isHighSurrogate(text.charAt(MAX_SHOWN - 1)) ? MAX_SHOWN - 1 : MAX_SHOWN; // a pair whole
        return text.substring(0, end) + "…";
    }

    private static String base64(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /**
     * @param address a key as shown, a key over 128 characters in full, or an {@link #address(String) address}
     * @return the key as the limiter stores it
     * @throws IllegalArgumentException when the address is empty, or an encoded one that does not decode
     */
    public static String key(String address) {
        return KeyExpressions.bounded(stored(address));
    }

    /**
     * @param address a key as shown, a key over 128 characters in full, or an {@link #address(String) address}
     * @return the key it names, in full (not hashed)
     * @throws IllegalArgumentException when the address is empty, has a lone UTF-16 surrogate (no UTF-8 form, so it
     *         would reach another key), is an encoded one that does not decode, or reaches a field that is no key
     */
    private static String stored(String address) {
        if (address == null || address.isEmpty()) {
            throw new IllegalArgumentException("key is missing: give the key as decisions and listings show it, or "
                    + "the address a listing gives");
        }
        String prefix = address.startsWith(ADDRESS_PREFIX)
                ? ADDRESS_PREFIX
                : address.startsWith(STORED_PREFIX) ? STORED_PREFIX : null;
        if (prefix == null) {
            KeyExpressions.checkNoLoneSurrogate(address, "an admin operation");
            return address;
        }
        String key = LimitEntries.utf8(decoded(address, prefix));
        if ((key == null || key.isEmpty()) && prefix.equals(ADDRESS_PREFIX)) {
            throw notDecoded(address, prefix);
        }
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("address " + LogText.quote(address) + " reaches an entry stored under "
                    + (key == null ? "bytes that are not UTF-8" : "the empty field") + ", which no key is: it can be "
                    + "shown and removed, not set or reset");
        }
        return key;
    }

    private static byte[] decoded(String address, String prefix) {
        try {
            return Base64.getUrlDecoder().decode(address.substring(prefix.length()));
        } catch (IllegalArgumentException e) {
            throw notDecoded(address, prefix);
        }
    }

    private static IllegalArgumentException notDecoded(String address, String prefix) {
        return new IllegalArgumentException("address " + LogText.quote(address) + " is not " + prefix + " followed by "
                + (prefix.equals(ADDRESS_PREFIX) ? "a key's UTF-8 bytes" : "a stored field's bytes")
                + " in base64url; use the address a listing gives");
    }

    /**
     * @param rule a rule's name
     * @param address the key's address
     * @return the key's entry; one the rule cannot use has a {@linkplain RedisLimitProvider.Entry#problem() problem}
     * @throws UnknownRuleException when the rule is not known
     * @throws IllegalStateException when per-key limits are not kept here
     * @throws RateLimitStoreException when Redis fails
     */
    public Optional<RedisLimitProvider.Entry> get(String rule, String address) {
        Rule r = rule(rule);
        return store().getStored(r.name(), field(address)).map(e -> checked(r, e));
    }

    /**
     * @param rule a rule's name
     * @param cursor {@code null} for the first page, else the previous page's {@code next}
     * @param count about how many entries per page, 1 to 1,000
     * @return a page of the rule's entries, each with a problem when the rule cannot use it
     * @throws UnknownRuleException when the rule is not known
     * @throws IllegalArgumentException when the count is out of range or the cursor is not one a page gave
     * @throws IllegalStateException when per-key limits are not kept here
     * @throws RateLimitStoreException when Redis fails
     */
    public RedisLimitProvider.Page list(String rule, String cursor, int count) {
        Rule r = rule(rule);
        RedisLimitProvider.Page page = store().list(r.name(), cursor, count);
        return new RedisLimitProvider.Page(
                page.entries().stream().map(e -> checked(r, e)).toList(), page.next());
    }

    /**
     * @param rule a rule's name
     * @param address the key's address
     * @param limits the limits, comma-separated ({@code 5/1s,100/1m}), 1 to {@value Rule#MAX_LIMITS}, that the rule
     *        can use
     * @param actor who makes the change, or {@code null} when not known
     * @return the entry as this change wrote it
     * @throws UnknownRuleException when the rule is not known
     * @throws InvalidRateLimitConfigurationException when the limits do not parse or the rule cannot use them
     * @throws IllegalArgumentException when the address is not one, or names a key the rule never counts by
     * @throws IllegalStateException when per-key limits are not kept here
     * @throws RateLimitStoreException when Redis fails
     */
    public RedisLimitProvider.Entry setLimits(String rule, String address, String limits, String actor) {
        Rule r = rule(rule);
        String key = key(address);
        List<Limit> parsed;
        try {
            parsed = LimitEntries.parse(limits);
        } catch (InvalidRateLimitConfigurationException e) {
            throw e.within("limits for key " + LogText.quote(key) + " of rule '" + r.name() + "'");
        }
        return store().setLimits(r, key, parsed, actor);
    }

    /**
     * @param rule a rule's name
     * @param address the key's address
     * @param plan a plan the limit store knows, whose limits the rule can use
     * @param actor who makes the change, or {@code null} when not known
     * @return the entry as this change wrote it
     * @throws UnknownRuleException when the rule is not known
     * @throws IllegalArgumentException when the plan is not known, the rule cannot use its limits, or the address is
     *         not one or names a key the rule never counts by
     * @throws IllegalStateException when per-key limits are not kept here
     * @throws RateLimitStoreException when Redis fails
     */
    public RedisLimitProvider.Entry assignPlan(String rule, String address, String plan, String actor) {
        Rule r = rule(rule);
        return store().assignPlan(r, key(address), plan, actor);
    }

    /**
     * @param rule a rule's name
     * @param address the key's address
     * @param actor who makes the change, or {@code null} when not known
     * @return whether the key had an entry
     * @throws UnknownRuleException when the rule is not known
     * @throws IllegalStateException when per-key limits are not kept here
     * @throws RateLimitStoreException when Redis fails
     */
    public boolean remove(String rule, String address, String actor) {
        Rule r = rule(rule);
        return store().removeStored(r.name(), field(address), actor);
    }

    /**
     * Forgets what the key has counted, on every instance ({@link RateLimiter#reset}), and logs who did: in every
     * limiter that has registered the rule (this admin's, or another filter's), or in this admin's when none has yet.
     *
     * @param rule a rule's name
     * @param address the key's address
     * @param actor who makes the change, or {@code null} when not known
     * @throws UnknownRuleException when the rule is not known
     * @throws IllegalArgumentException when the address is not one, or names a key the rule never counts by
     * @throws UnsupportedOperationException when the store cannot reset a key
     * @throws RateLimitStoreException when the store cannot be reached
     */
    public void reset(String rule, String address, String actor) {
        Rule r = rule(rule);
        String key = key(address);
        checkCounted(r, key);
        List<RateLimiter> counting = limiters().stream()
                .filter(l -> l.rules().stream().anyMatch(x -> x.name().equals(r.name())))
                .toList();
        for (RateLimiter l : counting.isEmpty() ? List.of(limiter) : counting) {
            l.reset(r.name(), key);
        }
        AUDIT.log(
                Level.INFO,
                () -> "Rule '" + r.name() + "' key " + LogText.quote(key) + " reset by "
                        + (actor == null || actor.isBlank() ? "an unknown caller" : LogText.quote(actor)));
    }

    /**
     * Changes a rule's own limits or mode at run time: with a limit store, in Redis, so every instance's limiter takes
     * it within the store's refresh interval (this one at once); without, in this instance's limiters only, until it
     * restarts. Keys with limits of their own keep them. Logged with who made it.
     *
     * @param rule a rule's name
     * @param limits its limits from now on, comma-separated ({@code 2/1s,100/1m}), or {@code null} to keep them
     * @param mode its mode from now on ({@code HARD} or {@code SHADOW}, any case), or {@code null} to keep it
     * @param actor who makes the change, or {@code null} when not known
     * @return the rule's limits and mode, as configured and as changed
     * @throws UnknownRuleException when the rule is not known
     * @throws InvalidRateLimitConfigurationException when the limits do not parse or the rule cannot use them, with the
     *         message a configuration with them gets at start-up
     * @throws IllegalArgumentException when nothing is changed, the mode is none, or the change is not one a rule can
     *         take at run time (a mode into or out of SOFT, limits of a concurrency rule), saying why
     * @throws RateLimitStoreException when Redis fails
     */
    public RuleLimits changeRule(String rule, @Nullable String limits, @Nullable String mode, String actor) {
        Rule r = rule(rule);
        List<Limit> parsed;
        try {
            parsed = limits == null ? null : LimitEntries.parse(limits);
        } catch (InvalidRateLimitConfigurationException e) {
            throw e.within("limits of rule '" + r.name() + "'");
        }
        Mode m = mode == null ? null : mode(r, mode);
        if (limitStore != null) {
            limitStore.changeRule(r, parsed, m, actor);
            return ruleLimits(r);
        }
        Rule changed = RuleChanges.changed(r, parsed, m);
        String by = actor == null || actor.isBlank() ? "unknown" : LimitEntries.actor(actor);
        localChanges.put(r.name(), new LimitEntries.RuleEntry(parsed, m, by, Instant.now(), null));
        for (RateLimiter l : limiters()) {
            l.changeRule(r.name(), changed);
        }
        AUDIT.log(
                Level.INFO,
                () -> "Rule '" + r.name() + "' changed to limits "
                        + String.join(
                                ",",
                                changed.limits().stream().map(Limit::toString).toList()) + " mode "
                        + changed.mode() + " in this instance only (no limit store) by " + who(actor));
        return ruleLimits(r);
    }

    /**
     * Takes a rule back to its configured limits and mode: with a limit store, on every instance; without, in this
     * instance. Logged with who did.
     *
     * @param rule a rule's name
     * @param actor who makes the change, or {@code null} when not known
     * @return whether the rule was changed
     * @throws UnknownRuleException when the rule is not known
     * @throws RateLimitStoreException when Redis fails
     */
    public boolean restoreRule(String rule, String actor) {
        Rule r = rule(rule);
        if (limitStore != null) {
            return limitStore.restoreRule(r.name(), actor);
        }
        boolean removed = localChanges.remove(r.name()) != null;
        for (RateLimiter l : limiters()) {
            l.changeRule(r.name(), null);
        }
        if (removed) {
            AUDIT.log(
                    Level.INFO,
                    () -> "Rule '" + r.name() + "' back to its configured limits and mode in this instance by "
                            + who(actor));
        }
        return removed;
    }

    /** @return every plan known (configured), with its configured limits, by name in order */
    public Map<String, List<Limit>> plans() {
        if (limitStore != null) {
            return new TreeMap<>(limitStore.plans());
        }
        Map<String, List<Limit>> all = new TreeMap<>();
        for (RateLimiter l : limiters()) {
            l.plans().forEach(all::putIfAbsent);
        }
        return all;
    }

    /**
     * Changes a plan's limits at run time, wherever it is used: keys assigned it (in Redis or in configuration) and
     * calls naming it. With a limit store, in Redis, so every instance takes it within the store's refresh interval
     * (this one at once); without, in this instance's limiters only, until it restarts. Keys keep their buckets.
     * Logged with who made it.
     *
     * @param plan a configured plan's name
     * @param limits its limits from now on, comma-separated ({@code 2/1s,100/1m})
     * @param actor who makes the change, or {@code null} when not known
     * @return the plan's limits, as configured and as changed
     * @throws UnknownPlanException when the plan is not configured
     * @throws InvalidRateLimitConfigurationException when the limits do not parse or a rule that may use the plan
     *         cannot use them, with the message a configuration with them gets at start-up
     * @throws RateLimitStoreException when Redis fails
     */
    public PlanLimits changePlan(String plan, String limits, String actor) {
        List<Limit> configured = knownPlan(plan);
        List<Limit> parsed;
        try {
            parsed = LimitEntries.parse(limits == null ? "" : limits);
        } catch (InvalidRateLimitConfigurationException e) {
            throw e.within("limits of plan '" + plan + "'");
        }
        for (RateLimiter l : limiters()) {
            l.checkPlan(plan, parsed); // every rule that may use it, before anything changes
        }
        if (limitStore != null) {
            limitStore.changePlan(plan, parsed, actor);
            return planLimits(plan, configured);
        }
        for (RateLimiter l : limiters()) {
            if (l.plans().containsKey(plan)) {
                l.changePlan(plan, parsed);
            }
        }
        String by = actor == null || actor.isBlank() ? "unknown" : LimitEntries.actor(actor);
        localPlans.put(plan, new LimitEntries.RuleEntry(parsed, null, by, Instant.now(), null));
        AUDIT.log(
                Level.INFO,
                () -> "Plan '" + plan + "' changed to limits "
                        + String.join(",", parsed.stream().map(Limit::toString).toList())
                        + " in this instance only (no limit store) by " + who(actor));
        return planLimits(plan, configured);
    }

    /**
     * Takes a plan back to its configured limits: with a limit store, on every instance; without, in this instance.
     * Logged with who did.
     *
     * @param plan a configured plan's name
     * @param actor who makes the change, or {@code null} when not known
     * @return whether the plan was changed
     * @throws UnknownPlanException when the plan is not configured
     * @throws RateLimitStoreException when Redis fails
     */
    public boolean restorePlan(String plan, String actor) {
        knownPlan(plan);
        if (limitStore != null) {
            return limitStore.restorePlan(plan, actor);
        }
        boolean removed = localPlans.remove(plan) != null;
        for (RateLimiter l : limiters()) {
            if (l.plans().containsKey(plan)) {
                l.changePlan(plan, null);
            }
        }
        if (removed) {
            AUDIT.log(
                    Level.INFO,
                    () -> "Plan '" + plan + "' back to its configured limits in this instance by " + who(actor));
        }
        return removed;
    }

    /**
     * @param plan a configured plan's name
     * @return its limits, as configured and as changed at run time
     * @throws UnknownPlanException when the plan is not configured
     */
    public PlanLimits planLimits(String plan) {
        return planLimits(plan, knownPlan(plan));
    }

    /** @return every configured plan's limits, as configured and as changed at run time, by name */
    public List<PlanLimits> planLimits() {
        return plans().entrySet().stream()
                .map(e -> planLimits(e.getKey(), e.getValue()))
                .toList();
    }

    /** @return the plan's configured limits */
    private List<Limit> knownPlan(@Nullable String plan) {
        Map<String, List<Limit>> known = plans();
        List<Limit> configured = plan == null ? null : known.get(plan);
        if (configured == null) {
            throw new UnknownPlanException(String.valueOf(plan), known.keySet());
        }
        return configured;
    }

    private PlanLimits planLimits(String plan, List<Limit> configured) {
        LimitEntries.RuleEntry entry = limitStore != null ? limitStore.planEntry(plan) : localPlans.get(plan);
        if (entry == null) {
            return new PlanLimits(plan, configured, configured, false, null, null, limitStore != null, null);
        }
        List<Limit> now = entry.problem() == null && entry.limits() != null ? entry.limits() : configured;
        return new PlanLimits(
                plan, configured, now, true, entry.changedBy(), entry.changedAt(), limitStore != null, entry.problem());
    }

    /**
     * @param rule a rule's name
     * @return its limits and mode, as configured and as changed at run time
     * @throws UnknownRuleException when the rule is not known
     */
    public RuleLimits ruleLimits(String rule) {
        return ruleLimits(rule(rule));
    }

    /** @return every known rule's limits and mode, as configured and as changed at run time, by name */
    public List<RuleLimits> ruleLimits() {
        return rules().values().stream().map(this::ruleLimits).toList();
    }

    private RuleLimits ruleLimits(Rule r) {
        LimitEntries.RuleEntry entry = limitStore != null ? limitStore.ruleEntry(r.name()) : localChanges.get(r.name());
        if (entry == null) {
            return new RuleLimits(
                    r.name(), r.limits(), r.mode(), r.limits(), r.mode(), false, null, null, limitStore != null, null);
        }
        String problem = entry.problem();
        Rule now = r;
        if (problem == null) {
            try {
                now = RuleChanges.changed(r, entry.limits(), entry.mode());
            } catch (IllegalArgumentException e) {
                problem = "the rule cannot take it: " + e.getMessage() + "; it decides as configured";
            }
        }
        return new RuleLimits(
                r.name(),
                r.limits(),
                r.mode(),
                now.limits(),
                now.mode(),
                true,
                entry.changedBy(),
                entry.changedAt(),
                limitStore != null,
                problem);
    }

    private static Mode mode(Rule rule, String mode) {
        for (Mode m : Mode.values()) {
            if (m.name().equalsIgnoreCase(mode.trim())) {
                return m;
            }
        }
        throw new IllegalArgumentException("mode " + LogText.quote(mode) + " of rule '" + rule.name() + "' is none: "
                + "give HARD or SHADOW (a rule changes between these two at run time)");
    }

    private static String who(@Nullable String actor) {
        return actor == null || actor.isBlank() ? "an unknown caller" : LogText.quote(actor);
    }

    /**
     * @param address a key as shown, a key over 128 characters in full, or an {@link #address(String) address}
     * @return the field of the rule's hash that {@link #get} and {@link #remove} reach: for a {@value #STORED_PREFIX}
     *         address, the bytes it carries; else the UTF-8 of {@link #key(String)}
     * @throws IllegalArgumentException as {@link #key(String)}
     */
    public static byte[] field(String address) {
        return address != null && address.startsWith(STORED_PREFIX)
                ? decoded(address, STORED_PREFIX)
                : key(address).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Refuses a change of a key the rule never counts by, which would answer as done and reach no client's calls
     * ({@link KeyExpressions#neverCounted}).
     *
     * @param rule the rule
     * @param key the key, as the limiter counts by it
     * @throws IllegalArgumentException saying why, and what to give instead
     */
    static void checkCounted(Rule rule, String key) {
        String why = KeyExpressions.neverCounted(key, rule);
        if (why != null) {
            throw new IllegalArgumentException("key " + LogText.quote(key) + " is no key of rule '" + rule.name()
                    + "': " + why + "; a change there would reach no client's calls. Give the key as decisions show "
                    + "it, the key in full, or the address a listing gives");
        }
    }

    private RedisLimitProvider store() {
        if (limitStore == null) {
            throw new IllegalStateException("per-key limits are not kept at run time here: switch them on with "
                    + "ratelimit.limit-store.enabled=true (with a Redis store); resets work without");
        }
        return limitStore;
    }

    /**
     * The entry, with a problem when no client's calls read it (it is stored under a field the rule never counts by)
     * or when the rule cannot use its limits (it then gives the rule's own).
     */
    private static RedisLimitProvider.Entry checked(Rule rule, RedisLimitProvider.Entry e) {
        String unread = unread(rule, e);
        if (unread != null) {
            return new RedisLimitProvider.Entry(
                    e.rule(), e.key(), e.address(), List.of(), e.plan(), e.changedBy(), e.changedAt(), unread);
        }
        if (e.problem() != null) {
            return e;
        }
        try {
            rule.withLimits(e.limits());
            return e;
        } catch (InvalidRateLimitConfigurationException x) {
            return new RedisLimitProvider.Entry(
                    e.rule(),
                    e.key(),
                    e.address(),
                    List.of(),
                    e.plan(),
                    e.changedBy(),
                    e.changedAt(),
                    "the rule cannot use the limits " + e.limits() + ": " + x.constraint() + "; the rule's own apply");
        }
    }

    /**
     * @return why no client's calls read the entry, with what to do, or {@code null} when the rule may count by its
     *         field
     */
    private static @Nullable String unread(Rule rule, RedisLimitProvider.Entry e) {
        if (e.address().startsWith(STORED_PREFIX)) {
            String key = LimitEntries.utf8(decoded(e.address(), STORED_PREFIX));
            if (key != null && key.length() > KeyExpressions.MAX_KEY_LENGTH) {
                return "stored under the key in full, which calls never read: they read its hash, "
                        + KeyExpressions.bounded(key) + ", so no client gets these limits; set them through this "
                        + "address (they are written under the hash) and delete this entry";
            }
            return "stored under a field that is no key: no client gets these limits; delete this entry";
        }
        String why = KeyExpressions.neverCounted(e.key(), rule);
        return why == null
                ? null
                : "stored under a key the rule never counts by (" + why + "): no client gets these "
                        + "limits; delete this entry";
    }
}
