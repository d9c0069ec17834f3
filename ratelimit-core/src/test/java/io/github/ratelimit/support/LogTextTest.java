package io.github.ratelimit.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What {@link LogText} makes of text from outside: one line, nothing hidden or reordered, and never ambiguous. */
class LogTextTest {

    @Test
    void aQuoteInTheTextCannotEndTheQuotedFieldAndPoseAsTheNextOne() {
        String line = "key " + LogText.quote("x' rule 'y") + " set";
        assertThat(line).isEqualTo("key 'x\\' rule \\'y' set");
        // Every quote left unescaped is one of the two that delimit the field.
        assertThat(line.replace("\\'", "")).containsOnlyOnce("'x").endsWith("y' set");
    }

    @Test
    void aLiteralBackslashNIsNotAnEscapedNewline() {
        assertThat(LogText.quote("a\\nb")).isEqualTo("'a\\\\nb'");
        assertThat(LogText.quote("a\nb")).isEqualTo("'a\\nb'");
        assertThat(LogText.escape("a\\+b")).isEqualTo("a\\\\+b");
        assertThat(LogText.quote("a\\nb")).isNotEqualTo(LogText.quote("a\nb"));
    }

    @Test
    void everyBidiControlAndInvisibleFormatCharacterIsEscaped() {
        int[] format = {
            0x061C, 0x00AD, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202E, 0x2060, 0x2066, 0x2069, 0xFEFF,
            0xE0001
        };
        for (int cp : format) {
            String text = "a" + Character.toString(cp) + "b";
            String quoted = LogText.quote(text);
            assertThat(quoted)
                    .as("U+%04X", cp)
                    .doesNotContain(Character.toString(cp))
                    .startsWith("'a\\u")
                    .endsWith("b'");
        }
        assertThat(LogText.escape("\u061C")).isEqualTo("\\u061c");
        assertThat(LogText.escape(Character.toString(0xE0001))).isEqualTo("\\udb40\\udc01");
        assertThat(LogText.escape("\uD800x")).as("a lone surrogate").isEqualTo("\\ud800x");
    }

    @Test
    void lineBreaksAndControlsAreEscapedAndPrintableTextIsKept() {
        assertThat(LogText.quote("a\r\n\t\u0000\u0085\u2028\u2029z"))
                .isEqualTo("'a\\r\\n\\t\\u0000\\u0085\\u2028\\u2029z'");
        assertThat(LogText.quote("user=alice:ü😀")).isEqualTo("'user=alice:ü😀'");
        assertThat(LogText.escape("it's")).as("only quote escapes the quote").isEqualTo("it's");
        assertThat(LogText.quote(null)).isEqualTo("null");
    }

    @Test
    void differentTextsNeverQuoteAlike() {
        List<String> parts = List.of("\\", "'", "n", "\n", "u", "\u061C", "0", "6", "1", "c", "x", "\uD800", "\uDC00");
        Map<String, String> seen = new HashMap<>();
        for (String a : parts) {
            for (String b : parts) {
                for (String c : parts) {
                    String text = a + b + c;
                    String previous = seen.put(LogText.quote(text), text);
                    assertThat(previous == null || previous.equals(text))
                            .as("%s and %s", previous, text)
                            .isTrue();
                }
            }
        }
    }

    @Test
    void aLongTextIsCutWithItsLength() {
        String quoted = LogText.quote("k".repeat(LogText.MAX_QUOTED + 5));
        assertThat(quoted)
                .isEqualTo("'" + "k".repeat(LogText.MAX_QUOTED) + "…' (" + (LogText.MAX_QUOTED + 5) + " characters)");
    }
}
