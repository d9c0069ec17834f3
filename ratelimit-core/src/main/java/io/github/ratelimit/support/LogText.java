package io.github.ratelimit.support;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Text from outside (a key, an administrator's name, a rule name given over HTTP, a value read from Redis) made safe
 * to put into a log line or an HTTP answer: nothing in it can end the line or start another, reorder or hide what a
 * viewer shows, or pose as the text around it, so it cannot forge an entry of an audit log. Every output reads back
 * to exactly one input. Shared by the project's packages; applications need not use it.
 */
public final class LogText {

    /** The longest text {@link #quote} keeps before it cuts; a key is at most 128 characters, a hash included. */
    static final int MAX_QUOTED = 300;

    private LogText() {}

    /**
     * Escapes, in Java's notation, every character that could end a log line, hide what follows, or make the result
     * ambiguous: the backslash itself as {@code \\}; CR, LF and TAB as {@code \r}, {@code \n} and {@code \t}; as
     * {@code \}{@code uXXXX} (each UTF-16 unit of a supplementary character) every other control character (C0, DEL,
     * C1, NEL included), the Unicode line and paragraph separators (U+2028, U+2029), every format character
     * ({@link Character#FORMAT}: the bidirectional controls U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to
     * U+2069, the invisible U+00AD, U+200B to U+200D, U+2060 to U+2064, U+FEFF, tags) and a lone surrogate. So a
     * literal backslash-n ({@code \\n}) never reads as an escaped newline ({@code \n}).
     *
     * @param text the text, or {@code null}
     * @return the text with those characters escaped; {@code "null"} for {@code null}
     */
    public static String escape(@Nullable String text) {
        return escape(text, false);
    }

    /**
     * @param text the text, or {@code null}
     * @return the text {@link #escape escaped}, with {@code '} escaped as {@code \'} too, between single quotes (so
     *         no text can end the quote and pose as the fields after it), cut after {@value #MAX_QUOTED} characters
     *         with the length it had; {@code null} as {@code null}, without quotes
     */
    public static String quote(@Nullable String text) {
        if (text == null) {
            return "null";
        }
        if (text.length() > MAX_QUOTED) {
            int end = Character.isHighSurrogate(text.charAt(MAX_QUOTED - 1)) ? MAX_QUOTED - 1 : MAX_QUOTED;
            return "'" + escape(text.substring(0, end), true) + "…' (" + text.length() + " characters)";
        }
        return "'" + escape(text, true) + "'";
    }

    private static String escape(@Nullable String text, boolean quotes) {
        if (text == null) {
            return "null";
        }
        StringBuilder sb = null;
        int i = 0;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            int units = Character.charCount(cp);
            String replacement = replacement(cp, quotes);
            if (replacement != null) {
                if (sb == null) {
                    sb = new StringBuilder(text.length() + 16).append(text, 0, i);
                }
                sb.append(replacement);
            } else if (sb != null) {
                sb.append(text, i, i + units);
            }
            i += units;
        }
        return sb == null ? text : sb.toString();
    }

    private static @Nullable String replacement(int cp, boolean quotes) {
        switch (cp) {
            case '\\':
                return "\\\\";
            case '\r':
                return "\\r";
            case '\n':
                return "\\n";
            case '\t':
                return "\\t";
            case '\'':
                return quotes ? "\\'" : null;
            default:
                break;
        }
        int type = Character.getType(cp);
        boolean unsafe = type == Character.CONTROL
                || type == Character.FORMAT
                || type == Character.SURROGATE
                || type == Character.LINE_SEPARATOR
                || type == Character.PARAGRAPH_SEPARATOR;
        if (!unsafe) {
            return null;
        }
        StringBuilder sb = new StringBuilder(12);
        for (char unit : Character.toChars(cp)) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) unit));
        }
        return sb.toString();
    }
}
