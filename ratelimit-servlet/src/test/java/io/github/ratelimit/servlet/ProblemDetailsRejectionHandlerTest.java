package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Mode;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProblemDetailsRejectionHandlerTest {

    private final Decision rejected = new Decision(
            Outcome.REJECTED,
            List.of(new Verdict("api", "k", Mode.HARD, Outcome.REJECTED, Basis.BUCKET, List.of(), 2_500_000_000L)),
            0,
            2_500_000_000L);

    @Test
    void writesAnRfc9457Body() {
        assertThat(ProblemDetailsRejectionHandler.body(rejected, 429, "/api/x"))
                .isEqualTo(
                        "{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,\"detail\":\"Rate limit of "
                                + "rule 'api' exceeded; retry after 3 s.\",\"instance\":\"/api/x\",\"retryAfter\":3}");
    }

    @Test
    void escapesWhatARequestUriCanCarry() {
        assertThat(ProblemDetailsRejectionHandler.body(rejected, 503, "/a\"b\\c<script>\n"))
                .contains("\"title\":\"Service Unavailable\"")
                .contains("\"instance\":\"/a\\\"b\\\\c\\u003cscript\\u003e\\n\"");
    }

    @Test
    void acceptsOnlyErrorStatuses() {
        assertThatThrownBy(() -> new ProblemDetailsRejectionHandler(200))
                .hasMessage("rejection status must be 400 to 599, but was 200");
    }
}
