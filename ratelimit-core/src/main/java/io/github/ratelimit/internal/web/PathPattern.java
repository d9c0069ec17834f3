package io.github.ratelimit.internal.web;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An Ant-style path pattern: {@code /login}, {@code /api/*}, {@code /api/**}, {@code /users/*}{@code /orders},
 * {@code /files/*.pdf}. {@code **} matches any number of whole segments (also none: {@code /api/**} matches
 * {@code /api}), {@code *} any characters within one segment, {@code ?} one character. Matching takes time
 * proportional to the path's segments times the pattern's (a handful), whatever the path: every path is matched,
 * however deep (a depth cap would let a client slip past a rule by adding segments); the container bounds the
 * length of a request line. Immutable and thread-safe.
 */
final class PathPattern {

    private final String text;
    private final String[] segments;
    /** Whether every segment is plain text (no {@code *}, {@code ?} or {@code **}): matched without splitting. */
    private final boolean literal;
    /** The first segment when it is plain text, which a path must start with; else {@code null}. */
    private final String first;

    private PathPattern(String text, String[] segments) {
        this.text = text;
        this.segments = segments;
        boolean plain = true;
        for (String segment : segments) {
            plain &= isPlain(segment);
        }
        this.literal = plain;
        this.first = segments.length > 0 && isPlain(segments[0]) ? segments[0] : null;
    }

    private static boolean isPlain(String segment) {
        return segment.indexOf('*') < 0 && segment.indexOf('?') < 0;
    }

    /**
     * @param text the pattern, starting with {@code /}
     * @param where the source, for messages
     * @return the pattern
     * @throws InvalidRateLimitConfigurationException when it does not start with {@code /} or mixes {@code **}
     *         with other text in one segment
     */
    static PathPattern parse(String text, String where) {
        String t = text == null ? "" : text.trim();
        if (!t.startsWith("/")) {
            throw new InvalidRateLimitConfigurationException(
                    where,
                    text,
                    "path pattern '" + text + "' does not " + "start with '/'",
                    "Write it like '/api/**' or '/login'.");
        }
        String[] parts = split(t);
        for (String part : parts) {
            if (part.contains("**") && !part.equals("**")) {
                throw new InvalidRateLimitConfigurationException(
                        where,
                        text,
                        "path pattern '" + text + "' has '**' " + "inside the segment '" + part + "'",
                        "Use '**' as a whole segment, e.g. '/api/**'.");
            }
        }
        return new PathPattern(t, parts);
    }

    private static String[] split(String path) {
        List<String> parts = new ArrayList<>();
        int start = 0;
        for (int i = 0; i <= path.length(); i++) {
            if (i == path.length() || path.charAt(i) == '/') {
                if (i > start) {
                    parts.add(path.substring(start, i));
                }
                start = i + 1;
            }
        }
        return parts.toArray(String[]::new);
    }

    /**
     * @param path a request path within the application, as the container decoded and normalized it
     * @return whether it matches
     */
    boolean matches(String path) {
        String p = path == null ? "/" : path;
        // Most requests meet most rules with another first segment, or a rule of plain text: neither needs the
        // path split into segments (an allocation per rule and request).
        if (first != null && !startsWithSegment(p, first)) {
            return false;
        }
        return literal ? matchesLiterally(p) : matchesBySegments(p);
    }

    /** @return whether the path's first segment (empty segments skipped, as {@link #split} does) is {@code segment} */
    private static boolean startsWithSegment(String path, String segment) {
        int i = 0;
        while (i < path.length() && path.charAt(i) == '/') {
            i++;
        }
        int end = path.indexOf('/', i);
        end = end < 0 ? path.length() : end;
        return end - i == segment.length() && path.regionMatches(i, segment, 0, segment.length());
    }

    /** @return whether the path's segments (empty ones skipped) are exactly this pattern's plain segments */
    private boolean matchesLiterally(String path) {
        int i = 0;
        int k = 0;
        while (true) {
            while (i < path.length() && path.charAt(i) == '/') {
                i++;
            }
            if (i == path.length()) {
                return k == segments.length;
            }
            if (k == segments.length) {
                return false;
            }
            int end = path.indexOf('/', i);
            end = end < 0 ? path.length() : end;
            String segment = segments[k++];
            if (end - i != segment.length() || !path.regionMatches(i, segment, 0, segment.length())) {
                return false;
            }
            i = end;
        }
    }

    /** The general match, segment by segment ({@code **} spanning any number): the reference the others agree with. */
    boolean matchesBySegments(String path) {
        String[] parts = split(path == null ? "/" : path);
        // reachable[j]: the pattern segments so far can match the first j path segments.
        boolean[] reachable = new boolean[parts.length + 1];
        boolean[] next = new boolean[parts.length + 1];
        reachable[0] = true;
        for (String segment : segments) {
            Arrays.fill(next, false);
            if (segment.equals("**")) {
                boolean any = false;
                for (int j = 0; j <= parts.length; j++) {
                    any |= reachable[j];
                    next[j] = any;
                }
            } else {
                for (int j = 0; j < parts.length; j++) {
                    if (reachable[j] && glob(segment, parts[j])) {
                        next[j + 1] = true;
                    }
                }
            }
            boolean[] swap = reachable;
            reachable = next;
            next = swap;
        }
        return reachable[parts.length];
    }

    /** Wildcard match of one segment: {@code *} any run, {@code ?} one character; greedy with backtracking. */
    private static boolean glob(String pattern, String text) {
        int p = 0;
        int t = 0;
        int star = -1;
        int mark = 0;
        while (t < text.length()) {
            if (p < pattern.length() && (pattern.charAt(p) == '?' || pattern.charAt(p) == text.charAt(t))) {
                p++;
                t++;
            } else if (p < pattern.length() && pattern.charAt(p) == '*') {
                star = p++;
                mark = t;
            } else if (star >= 0) {
                p = star + 1;
                t = ++mark;
            } else {
                return false;
            }
        }
        while (p < pattern.length() && pattern.charAt(p) == '*') {
            p++;
        }
        return p == pattern.length();
    }

    @Override
    public String toString() {
        return text;
    }
}
