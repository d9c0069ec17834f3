package io.github.ratelimit;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A {@link LimitProvider} from fixed maps: named plans, and keys assigned a plan or given limits of their
 * own. Immutable and thread-safe.
 *
 * <p>Keys are written {@code <key expression>:<key>} and apply to every rule with that key expression:
 * {@code user:241531} applies to rules keyed by {@code user} when the user is {@code 241531};
 * {@code header:X-Api-Key:k-42} to rules keyed by {@code header:X-Api-Key}.
 *
 * <pre>{@code
 * MapLimitProvider limits = MapLimitProvider.builder()
 *         .plan("free", "10/1m")
 *         .plan("paid", "1000/1m", "20/1s")
 *         .assign("user:alice", "paid")
 *         .limits("user:241531", "5/1s")
 *         .build();
 * }</pre>
 */
public final class MapLimitProvider implements LimitProvider {

    private final Map<String, List<Limit>> byKey;

    private MapLimitProvider(Map<String, List<Limit>> byKey) {
        this.byKey = Map.copyOf(byKey);
    }

    /**
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public List<Limit> limitsFor(Rule rule, String key) {
        return byKey.get(rule.key() + ":" + key);
    }

    /**
     * @return the number of keys with limits of their own
     */
    public int size() {
        return byKey.size();
    }

    /**
     * Builds a {@link MapLimitProvider}; validates as values are added. Not thread-safe.
     */
    public static final class Builder {

        private final Map<String, List<Limit>> plans = new HashMap<>();
        private final Map<String, List<Limit>> byKey = new HashMap<>();
        private String source = "MapLimitProvider";

        private Builder() {
        }

        /**
         * @param source where the values come from, the prefix of messages (e.g. {@code ratelimit.keys})
         * @return this builder
         */
        public Builder source(String source) {
            this.source = Objects.requireNonNull(source, "source");
            return this;
        }

        /**
         * @param name the plan's name
         * @param limits its limits in text form
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when a limit is invalid or none is given
         */
        public Builder plan(String name, String... limits) {
            plans.put(Objects.requireNonNull(name, "name"), parse(source + ": plan '" + name + "'", limits));
            return this;
        }

        /**
         * @param key {@code <key expression>:<key>}, e.g. {@code user:alice}
         * @param plan a plan added before with {@link #plan}
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when the plan is unknown
         */
        public Builder assign(String key, String plan) {
            checkKey(key);
            List<Limit> limits = plans.get(plan);
            if (limits == null) {
                throw new InvalidRateLimitConfigurationException(source + ": key '" + key + "' is assigned plan '"
                        + plan + "', which is not defined. Defined plans: " + new java.util.TreeSet<>(plans.keySet())
                        + ". Define the plan first.");
            }
            byKey.put(key, limits);
            return this;
        }

        /**
         * @param key {@code <key expression>:<key>}, e.g. {@code user:241531}
         * @param limits the key's own limits in text form
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when a limit is invalid or none is given
         */
        public Builder limits(String key, String... limits) {
            checkKey(key);
            byKey.put(key, parse(source + ": key '" + key + "'", limits));
            return this;
        }

        /**
         * @return the provider
         */
        public MapLimitProvider build() {
            return new MapLimitProvider(byKey);
        }

        private void checkKey(String key) {
            if (key == null || key.indexOf(':') <= 0 || key.endsWith(":")) {
                throw new InvalidRateLimitConfigurationException(source + ": key '" + key + "' is not of the form "
                        + "'<key expression>:<key>'. Write it like 'user:241531' or 'header:X-Api-Key:k-42'.");
            }
        }

        private static List<Limit> parse(String where, String... texts) {
            if (texts == null || texts.length == 0) {
                throw new InvalidRateLimitConfigurationException(where + ": no limit is given. Give at least one, "
                        + "e.g. '5/1s'.");
            }
            List<Limit> limits = new ArrayList<>(texts.length);
            for (int i = 0; i < texts.length; i++) {
                try {
                    limits.add(Limit.parse(texts[i]));
                } catch (InvalidRateLimitConfigurationException e) {
                    throw new InvalidRateLimitConfigurationException(where + ": limits[" + i + "]: " + e.getMessage());
                }
            }
            return List.copyOf(limits);
        }
    }
}
