package io.github.ratelimit.internal;

/**
 * Text from outside (a key, an administrator's name, a rule name given over HTTP) made safe to put into a log line:
 * nothing in it can end the line or start another, so it cannot forge an entry of an audit log. Not part of the
 * public API.
 */
public final class LogText {

    /** The longest text {@link #quote} keeps before it cuts; a key is at most 128 characters, a hash included. */
    static final int MAX_QUOTED = 300;

    private LogText() {
    }

    /**
     * Escapes every character that could end a log line or hide what follows: control characters (C0, DEL and C1,
     * which include CR, LF, TAB and NEL) as {@code \r}, {@code \n}, {@code \t} or {@code \}{@code uXXXX}; the Unicode
     * line and paragraph separators (U+2028, U+2029) and the bidirectional formatting characters (U+200E, U+200F,
     * U+202A to U+202E, U+2066 to U+2069), which reorder what a viewer shows, as {@code \}{@code uXXXX}. A backslash
     * stays as it is: keys escape their own separators with it, and the log shows a key as decisions do.
     *
     * @param text the text, or {@code null}
     * @return the text with those characters escaped; {@code "null"} for {@code null}
     */
    public static String escape(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder sb = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            String replacement = replacement(c);
            if (replacement != null && sb == null) {
                sb = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (replacement != null) {
                sb.append(replacement);
            } else if (sb != null) {
                sb.append(c);
            }
        }
        return sb == null ? text : sb.toString();
    }

    /**
     * @param text the text, or {@code null}
     * @return the text {@link #escape escaped} between single quotes, cut after {@value #MAX_QUOTED} characters
     *         with the length it had
     */
    public static String quote(String text) {
        if (text != null && text.length() > MAX_QUOTED) {
            return "'" + escape(text.substring(0, MAX_QUOTED)) + "…' (" + text.length() + " characters)";
        }
        return "'" + escape(text) + "'";
    }

    private static String replacement(char c) {
        switch (c) {
            case '\r':
                return "\\r";
            case '\n':
                return "\\n";
            case '\t':
                return "\\t";
            default:
                break;
        }
        boolean unsafe = Character.getType(c) == Character.CONTROL || c == '\u2028' || c == '\u2029'
                || c == '\u200E' || c == '\u200F' || (c >= '\u202A' && c <= '\u202E') || (c >= '\u2066' && c <= '\u2069');
        return unsafe ? String.format(java.util.Locale.ROOT, "\\u%04x", (int) c) : null;
    }
}
