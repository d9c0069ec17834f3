package io.github.ratelimit;

import java.util.List;

/**
 * One rule's part of a {@link Decision}.
 *
 * @param rule the rule's name ({@link Rule#name()}): what operators see, in metrics, logs and the Actuator endpoint
 * @param key the key the call was counted by (possibly hashed, see {@link io.github.ratelimit.key.KeyResolver});
 *        {@code null} when it could not be resolved. May identify a person: keep it out of metric tags.
 * @param mode the rule's mode
 * @param outcome what the rule decided
 * @param basis what the verdict rests on
 * @param windows the state of each window after the decision; empty when no bucket was consulted, and for a
 *        permitted call of a rule that counts only failures (its windows say nothing of the request rate)
 * @param waitNanos for {@link Outcome#DELAYED}, the delay; for {@link Outcome#REJECTED} and
 *        {@link Outcome#SHADOW_REJECTED}, how long until the call could pass (0 when unknown); otherwise 0
 * @param receipt what identifies the permits this call took in the store, so {@link Guard#refund} gives back
 *        exactly these (a sliding log forgets this call's entry, not another's); opaque, 0 when nothing was taken
 *        or the algorithm needs none
 * @param publicName the name clients see for the rule ({@link Rule#publicName()}), in the rate-limit headers and
 *        response bodies; {@code null} means {@code rule}
 */
public record Verdict(String rule, String key, Mode mode, Outcome outcome, Basis basis, List<WindowState> windows,
                      long waitNanos, long receipt, String publicName) {

    /**
     * A verdict whose rule shows clients its own name.
     *
     * @param rule the rule's name
     * @param key the key, or {@code null}
     * @param mode the rule's mode
     * @param outcome what the rule decided
     * @param basis what the verdict rests on
     * @param windows the state of each window
     * @param waitNanos the delay or the wait
     * @param receipt the permits' receipt, or 0
     */
    public Verdict(String rule, String key, Mode mode, Outcome outcome, Basis basis, List<WindowState> windows,
                   long waitNanos, long receipt) {
        this(rule, key, mode, outcome, basis, windows, waitNanos, receipt, rule);
    }

    /**
     * A verdict without a receipt, whose rule shows clients its own name.
     *
     * @param rule the rule's name
     * @param key the key, or {@code null}
     * @param mode the rule's mode
     * @param outcome what the rule decided
     * @param basis what the verdict rests on
     * @param windows the state of each window
     * @param waitNanos the delay or the wait
     */
    public Verdict(String rule, String key, Mode mode, Outcome outcome, Basis basis, List<WindowState> windows,
                   long waitNanos) {
        this(rule, key, mode, outcome, basis, windows, waitNanos, 0, rule);
    }

    /**
     * @throws NullPointerException when a required component is null
     */
    public Verdict {
        java.util.Objects.requireNonNull(rule, "rule");
        java.util.Objects.requireNonNull(mode, "mode");
        java.util.Objects.requireNonNull(outcome, "outcome");
        java.util.Objects.requireNonNull(basis, "basis");
        windows = windows == null ? List.of() : windows;
        publicName = publicName == null ? rule : publicName;
    }
}
