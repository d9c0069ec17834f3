package io.github.ratelimit.samples.plain;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PlainJavaSampleTest {

    @Test
    void printsABurstBeingLimited() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PlainJavaSample.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        String[] bursts = out.split("After 1 s|SOFT rule");
        // First burst: the second window stops the sixth request.
        assertThat(bursts[0])
                .contains("#5 ALLOWED  window=1s")
                .contains("#6 REJECTED window=1s")
                .contains("Retry-After=1");
        // Second burst: only three of the minute's eight tokens are left.
        assertThat(bursts[1]).contains("#3 ALLOWED").contains("#4 REJECTED window=1m");
        // Soft rule: two at once, the rest delayed rather than rejected.
        assertThat(bursts[2]).contains("#2 ALLOWED").contains("#3 DELAYED").doesNotContain("REJECTED");
    }
}
